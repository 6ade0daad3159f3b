import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import {
  ChangeNotifications,
  LocalChangeNotifications,
  PostgresChangeNotifications,
} from './change-notifications.js';
import { dataSourceOptions, openDataSource, postgresClientConfig } from './data-source.js';
import { SqlRunner } from './sql-runner.js';
import { sqlRunnerFor } from './sql-runner-for.js';
import { Metrics } from '../metrics/metrics.js';
import { type DatabaseRole, ObservedSqlRunner } from './observed-sql-runner.js';
import { isTracingOn } from '../telemetry/tracing.js';
import { PipelinedReads } from './pipelined-reads.js';
import { PoolGauge } from './pool.gauge.js';
import { hasReadNode } from './read-node.js';

/** The engine's runner as it is, unless metrics or traces want each statement observed. */
function instrumented(
  runner: SqlRunner,
  metrics: Metrics | undefined,
  readRole: DatabaseRole,
): SqlRunner {
  return metrics || isTracingOn() ? new ObservedSqlRunner(runner, metrics, readRole) : runner;
}

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.database),
        autoLoadEntities: true,
      }),
      dataSourceFactory: (options) => openDataSource(options!),
    }),
  ],
  providers: [
    PoolGauge,
    {
      // The reads' own connections on PostgreSQL without a read node, whose reads keep its pool
      // and fallback (read-node.ts); none is opened until a read asks for one.
      provide: PipelinedReads,
      inject: [AppConfig],
      useFactory: ({ database }: AppConfig): PipelinedReads | null =>
        database.type === 'postgres' && !database.readUrl
          ? new PipelinedReads(postgresClientConfig(database.url))
          : null,
    },
    {
      provide: SqlRunner,
      // Metrics exist only with METRICS_PORT set (metrics.module.ts).
      inject: [DataSource, PipelinedReads, { token: Metrics, optional: true }],
      useFactory: (
        dataSource: DataSource,
        pipelinedReads: PipelinedReads | null,
        metrics?: Metrics,
      ): SqlRunner =>
        instrumented(
          sqlRunnerFor(dataSource, metrics, pipelinedReads ?? undefined),
          metrics,
          hasReadNode(dataSource) ? 'replica' : 'primary',
        ),
    },
    {
      provide: ChangeNotifications,
      inject: [AppConfig],
      useFactory: ({ database }: AppConfig): ChangeNotifications =>
        database.type === 'postgres'
          ? new PostgresChangeNotifications(database.url)
          : new LocalChangeNotifications(),
    },
  ],
  exports: [SqlRunner, ChangeNotifications],
})
export class DatabaseModule {}
