import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, openDataSource, sqliteConnectionOf } from './data-source.js';
import { PostgresSqlRunner } from './postgres-sql-runner.js';
import { SqlRunner } from './sql-runner.js';
import { SqliteSqlRunner } from './sqlite-sql-runner.js';
import { TracedSqlRunner } from '../telemetry/traced-sql-runner.js';
import { isTracingOn } from '../telemetry/tracing.js';

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
      inject: [DataSource],
      useFactory: (dataSource: DataSource): SqlRunner => {
        const runner =
          dataSource.options.type === 'postgres'
            ? new PostgresSqlRunner(dataSource)
            : new SqliteSqlRunner(sqliteConnectionOf(dataSource));
        return isTracingOn() ? new TracedSqlRunner(runner) : runner;
      },
    },
  ],
  exports: [SqlRunner],
})
export class DatabaseModule {}
