import type { DataSource } from 'typeorm';
import type { Metrics } from '../metrics/metrics.js';
import type { PipelinedReads } from './pipelined-reads.js';
import { PostgresSqlRunner } from './postgres-sql-runner.js';
import type { SqlRunner } from './sql-runner.js';
import { SqliteSqlRunner } from './sqlite-sql-runner.js';

/**
 * The runner of `dataSource`'s engine, for the server (database.module.ts, which adds statement
 * metrics and spans) and the `apikey` CLI alike. `metrics` counts the reads the primary answered
 * because the read node failed; `pipelinedReads` (the server's) carries the reads.
 */
export function sqlRunnerFor(
  dataSource: DataSource,
  metrics?: Metrics,
  pipelinedReads?: PipelinedReads,
): SqlRunner {
  if (dataSource.options.type !== 'postgres') return new SqliteSqlRunner(dataSource);
  return new PostgresSqlRunner(
    dataSource,
    () => metrics?.databaseReadFallbacks.inc(),
    pipelinedReads,
  );
}
