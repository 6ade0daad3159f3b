import { Injectable, Optional } from '@nestjs/common';
import type pg from 'pg';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { Metrics } from '../metrics/metrics.js';

/**
 * The connection pools TypeORM's PostgreSQL driver keeps (`master`, and `slaves` with a read
 * node; both public members of the driver), as a metric read at each scrape.
 */
@Injectable()
export class PoolGauge {
  constructor(dataSource: DataSource, @Optional() metrics?: Metrics) {
    if (!metrics || dataSource.options.type !== 'postgres') return;
    const driver = dataSource.driver as PostgresDriver;
    new Gauge({
      name: 'animal_store_db_pool_connections',
      help: 'PostgreSQL connections of this instance, by pool role and state (total, idle, waiting requests).',
      labelNames: ['role', 'state'] as const,
      registers: [metrics.registry],
      collect() {
        for (const { role, pool } of poolsOf(driver)) {
          this.set({ role, state: 'total' }, pool.totalCount);
          this.set({ role, state: 'idle' }, pool.idleCount);
          this.set({ role, state: 'waiting' }, pool.waitingCount);
        }
      },
    });
  }
}

function poolsOf(driver: PostgresDriver): { role: 'primary' | 'replica'; pool: pg.Pool }[] {
  const replicas = (driver.slaves as pg.Pool[] | undefined) ?? [];
  return [
    ...(driver.master ? [{ role: 'primary' as const, pool: driver.master as pg.Pool }] : []),
    ...replicas.map((pool) => ({ role: 'replica' as const, pool })),
  ];
}
