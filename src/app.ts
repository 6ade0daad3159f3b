import { type DynamicModule, type NestApplicationOptions, VersioningType } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { buildOpenApiDocument, setupDocs } from './docs/openapi.js';
import { createHttpAdapter } from './http/http-adapter.js';
import { configureHttpServer } from './http/http-server.js';
import { RequestsInFlight } from './http/requests-in-flight.js';
import { RouteTable } from './http/route-table.js';
import { createLogger, NestPinoLogger } from './logging/logger.js';
import { recordHttpMetrics } from './http/request-metrics.js';
import { Metrics } from './metrics/metrics.js';
import { operationsByRoute } from './http/operations.js';
import { traceRequests } from './telemetry/traced-requests.js';
import { isTracingOn } from './telemetry/tracing.js';

/**
 * Makes the Nest application from the root module. `NestFactory.create` everywhere but in tests
 * that replace a provider (the Clock): they compile the same module with Nest's testing module
 * (test/support/test-app.ts), and everything else below is the same.
 */
export type NestAppFactory = (
  module: DynamicModule,
  adapter: FastifyAdapter,
  options: NestApplicationOptions,
) => Promise<NestFastifyApplication>;

const fromNestFactory: NestAppFactory = (module, adapter, options) =>
  NestFactory.create<NestFastifyApplication>(module, adapter, options);

/**
 * Builds the whole application, initialised but not listening. `main.ts` and the e2e tests both
 * start from here, so tests run exactly what production runs.
 */
export async function createApp(
  config: AppConfig,
  logger: Logger = createLogger(config.logLevel),
  makeApp: NestAppFactory = fromNestFactory,
): Promise<NestFastifyApplication> {
  const adapter = createHttpAdapter(config, logger);
  const app = await makeApp(AppModule.forRoot(config), adapter, {
    logger: new NestPinoLogger(logger),
    // Our own parsers (http/request-body.ts) replace Nest's, so bad bodies reach the guard first.
    bodyParser: false,
    // A failed start (say, an unreachable database) is thrown to the caller instead of Nest
    // exiting the process, so main.ts reports it and tests see it.
    abortOnError: false,
  });
  configureHttpServer(adapter.getInstance(), app.get(RouteTable), app.get(RequestsInFlight));
  if (isTracingOn()) traceRequests(adapter.getInstance());
  app.enableVersioning({ type: VersioningType.URI });
  const document = buildOpenApiDocument(app, config);
  setupDocs(app, document);
  if (config.metricsPort !== undefined)
    recordHttpMetrics(adapter.getInstance(), app.get(Metrics), operationsByRoute(document));
  await app.init();
  return app;
}
