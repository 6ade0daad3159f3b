import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';

export type Engine = 'sqlite' | 'postgres';

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export const ENGINES: Engine[] = process.env.TEST_DATABASE_URL
  ? ['sqlite', 'postgres']
  : ['sqlite'];

export interface TestDatabase {
  /** A DATABASE_URL for the app and the CLI. */
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database: a temporary SQLite file, or a new PostgreSQL database. */
export async function createTestDatabase(engine: Engine): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'animal-store-test-'));
    return {
      url: `sqlite:${join(dir, 'animal-store.sqlite')}`,
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  return createPostgresTestDatabase(`animal_store_test_${randomBytes(6).toString('hex')}`);
}

/**
 * An exact copy of a PostgreSQL test database (same rows, same sequence positions), made with
 * CREATE DATABASE … TEMPLATE: nothing may be connected to the original meanwhile.
 */
export async function copyPostgresTestDatabase(original: TestDatabase): Promise<TestDatabase> {
  const source = new URL(original.url).pathname.slice(1);
  return createPostgresTestDatabase(`${source}_copy`, `TEMPLATE ${source}`);
}

/** CREATE DATABASE `name` on this worker's PostgreSQL server, with `options` after the name. */
async function createPostgresTestDatabase(name: string, options = ''): Promise<TestDatabase> {
  const adminUrl = postgresServer();
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name} ${options}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withAdminClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      ),
  };
}

async function withAdminClient(
  url: string,
  work: (client: pg.Client) => Promise<unknown>,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * This worker's PostgreSQL server: each worker has its own while files run in parallel, so that
 * no file's transactions hold back another's events (test/support/global-setup.ts).
 */
function postgresServer(): string {
  const servers = inject('postgresServers');
  const worker = Number(process.env.VITEST_POOL_ID ?? 1);
  return servers[(worker - 1) % servers.length];
}
