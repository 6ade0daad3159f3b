import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, openDataSource, sqliteConnectionOf } from './data-source.js';
import { PostgresSqlRunner } from './postgres-sql-runner.js';
import { SqlRunner } from './sql-runner.js';
import { SqliteSqlRunner } from './sqlite-sql-runner.js';
import { Metrics } from '../metrics/metrics.js';
import { InstrumentedSqlRunner } from '../telemetry/instrumented-sql-runner.js';
import { isTracingOn } from '../telemetry/tracing.js';
import { observePostgresPools } from './pool-stats.js';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => dataSourceOptions(config.database),
      dataSourceFactory: (options) => openDataSource(options!),
    }),
  ],
  providers: [
    {
      provide: SqlRunner,
      // Metrics exist only with METRICS_PORT set (metrics.module.ts).
      inject: [DataSource, { token: Metrics, optional: true }],
      useFactory: (dataSource: DataSource, metrics?: Metrics): SqlRunner => {
        const runner =
          dataSource.options.type === 'postgres'
            ? new PostgresSqlRunner(dataSource)
            : new SqliteSqlRunner(sqliteConnectionOf(dataSource));
        if (metrics && dataSource.options.type === 'postgres')
          observePostgresPools(metrics, dataSource);
        return metrics || isTracingOn()
          ? new InstrumentedSqlRunner(runner, metrics, 'primary')
          : runner;
      },
    },
  ],
  exports: [SqlRunner],
})
export class DatabaseModule {}
