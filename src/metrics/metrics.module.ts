import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { HealthModule } from '../health/health.module.js';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';

/**
 * Metrics exist only when METRICS_PORT is set: without a listener nothing is kept. Global, so the
 * database module can measure its statements when they exist.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.metricsPort === undefined) return { module: MetricsModule };
    return {
      module: MetricsModule,
      imports: [HealthModule],
      providers: [Metrics, MetricsServer],
      exports: [Metrics],
    };
  }
}
