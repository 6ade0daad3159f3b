import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

/**
 * Serves the exposition format on METRICS_HOST:METRICS_PORT, a listener of its own: metrics never
 * appear on the API port and need no API key (docs/observability.md, "Metrics").
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { metrics } = this;
    this.server = createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?', 1)[0] !== METRICS_PATH) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
        return;
      }
      metrics.exposition().then(
        (text) =>
          response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (error: unknown) => {
          this.logger.error(`collecting metrics failed: ${String(error)}`);
          response.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting failed\n');
        },
      );
    });
    this.server.listen(this.config.metricsPort, this.config.metricsHost);
    await once(this.server, 'listening');
    this.logger.log(`serving ${METRICS_PATH} on ${this.config.metricsHost}:${this.address()}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server?.listening) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }

  /** The port the listener got (METRICS_PORT, or the one the kernel picked for 0 in tests). */
  address(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : undefined;
  }
}
