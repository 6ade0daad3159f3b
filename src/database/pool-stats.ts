import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { Metrics } from '../metrics/metrics.js';

/** pg's Pool counters (node-postgres documents them on `Pool`). */
interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * Reports the connection pools TypeORM's PostgreSQL driver keeps: `master`, and `slaves` when a
 * read replica is configured (both public members of the driver).
 */
export function observePostgresPools(metrics: Metrics, dataSource: DataSource): void {
  const driver = dataSource.driver as PostgresDriver;
  const stats = (role: 'primary' | 'replica', pool: PgPool) => ({
    role,
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  });
  metrics.observePools(() => [
    ...(driver.master ? [stats('primary', driver.master as PgPool)] : []),
    ...(driver.slaves ?? []).map((pool) => stats('replica', pool as PgPool)),
  ]);
}
