import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';

/**
 * Metrics exist only when METRICS_PORT is set: without a listener nothing is kept, and every
 * module that records some injects `Metrics` as optional. Global, so each can.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.metricsPort === undefined) return { module: MetricsModule };
    return {
      module: MetricsModule,
      providers: [Metrics, MetricsServer],
      exports: [Metrics],
    };
  }
}
