import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { type ServerProcess, startServer, waitFor } from '../../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

/** Enough lapsed holds that the first process is killed while it is still expiring them. */
const LAPSED = 20_000;
const SERVER_ENV = { NODE_ENV: 'production', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0' };

/** N pets held by N open orders whose deadline passed a minute ago. */
const SEED = {
  postgres: [
    `INSERT INTO pets (name, category_id, status)
     SELECT 'Pet ' || n, 1, 'pending' FROM generate_series(1, ${LAPSED}) AS n`,
    `INSERT INTO orders (pet_id, status, created_at, expires_at)
     SELECT id, 'open', now() - interval '2 minutes', now() - interval '1 minute' FROM pets`,
  ],
  sqlite: [
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${LAPSED})
     INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, 1, 'pending' FROM n`,
    `INSERT INTO orders (pet_id, status, created_at, expires_at)
     SELECT id, 'open', strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-2 minutes'),
       strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 minute') FROM pets`,
  ],
};

describe.each(ENGINES)('the expiry sweep across a killed process [%s]', (engine) => {
  let database: TestDatabase;
  let db: DataSource;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    // The first start migrates; the seed then lands under a running sweep.
    servers.push(await startServer({ ...SERVER_ENV, DATABASE_URL: database.url }));
    db = await openDataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
    );
  });
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    await db?.destroy();
    await database?.drop();
  });

  const count = async (sql: string) => Number((await db.query(sql))[0].n);
  const expired = () => count(`SELECT count(*) AS n FROM orders WHERE status = 'expired'`);

  it('a restarted process finishes what a SIGKILLed one left, each hold expired exactly once', async () => {
    for (const sql of SEED[engine]) await db.query(sql);
    await waitFor(async () => (await expired()) > 0, 10_000);
    servers[0].child.kill('SIGKILL');
    await servers[0].exited;
    const left = LAPSED - (await expired());
    expect(left).toBeGreaterThan(0);

    servers.push(await startServer({ ...SERVER_ENV, DATABASE_URL: database.url }));
    await waitFor(async () => (await expired()) === LAPSED, 40_000);

    expect(await count(`SELECT count(*) AS n FROM orders WHERE closed_at <> expires_at`)).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM pets WHERE status <> 'available' OR revision <> 2`),
    ).toBe(0);
    // Exactly two events per hold, each order.expired right before its pet's pet.updated.
    const events = await db.query<{ type: string; pet_id: number | string }[]>(
      'SELECT type, pet_id FROM pet_events ORDER BY tx, seq',
    );
    expect(events).toHaveLength(2 * LAPSED);
    const unpaired = events.filter(
      (event, i) =>
        (i % 2 === 0 && event.type !== 'order.expired') ||
        (i % 2 === 1 &&
          (event.type !== 'pet.updated' || String(event.pet_id) !== String(events[i - 1].pet_id))),
    );
    expect(unpaired).toEqual([]);
    expect(new Set(events.map((event) => String(event.pet_id))).size).toBe(LAPSED);
  }, 60_000);
});
