import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSourceOptions } from '../../src/database/data-source.js';
import { apiClient, inParallel, tally, type ApiClient } from '../support/http-client.js';
import { migrateTogether } from '../support/migrate-together.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';

const MIGRATION_COUNT = (dataSourceOptions({ type: 'sqlite', path: ':memory:' }).migrations as [])
  .length;

/** The README's promise: a revoked or expired key is refused by every replica within this long. */
const REVOCATION_MS = 5_000;

async function query<T>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

describe.skipIf(!ENGINES.includes('postgres'))(
  'two server processes on one PostgreSQL database [postgres]',
  () => {
    let database: TestDatabase;
    let replicas: ServerProcess[];
    let clients: ApiClient[];
    let keyId: number;

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      const env = {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '0',
        DATABASE_URL: database.url,
      };
      // Both at once, on the empty database: both run their migrations at start.
      replicas = await Promise.all([startServer(env), startServer(env)]);
      const key = (await runApiKeyCli(['create', 'replicas'], database.url)).stdout.trim();
      [{ id: keyId }] = await query<{ id: number }>(
        database.url,
        "SELECT id FROM api_keys WHERE name = 'replicas'",
      );
      clients = replicas.map((replica) => apiClient(replica.baseUrl, key, 10));
    });
    afterAll(async () => {
      for (const client of clients ?? []) client.close();
      for (const replica of replicas ?? []) replica.child.kill('SIGKILL');
      await database?.drop();
    });

    it('both start together on the empty database, and the schema is migrated once', async () => {
      for (const client of clients) {
        expect((await client.get('/health/ready')).status).toBe(200);
      }
      const [counts] = await query<{ runs: number; names: number }>(
        database.url,
        'SELECT count(*)::int AS runs, count(DISTINCT name)::int AS names FROM migrations',
      );
      expect(counts).toEqual({ runs: MIGRATION_COUNT, names: MIGRATION_COUNT });
    });

    it('processes opening one empty database at the same instant all start, and migrate it once', async () => {
      const fresh = await createTestDatabase('postgres');
      try {
        const opened = await migrateTogether(fresh.url, 4);

        expect(opened.map(({ code, stdout }) => ({ code, stdout }))).toEqual(
          Array(4).fill({ code: 0, stdout: 'migrated\n' }),
        );
        const [{ runs }] = await query<{ runs: number }>(
          fresh.url,
          'SELECT count(*)::int AS runs FROM migrations',
        );
        expect(runs).toBe(MIGRATION_COUNT);
      } finally {
        await fresh.drop();
      }
    });

    it('concurrent creates on both get unique ids, and every acknowledged pet is stored', async () => {
      const perReplica = 100;
      const created = (
        await Promise.all(
          clients.map((client, replica) =>
            inParallel(perReplica, 10, async (i) => {
              const name = `replica ${replica} pet ${i}`;
              return { name, outcome: await client.post('/v1/pets', { name, categoryId: 3 }) };
            }),
          ),
        )
      ).flat();

      expect(tally(created.map(({ outcome }) => outcome))).toEqual({ 201: 2 * perReplica });
      const ids = created.map(({ outcome }) => (outcome.body as { id: number }).id);
      expect(new Set(ids).size).toBe(ids.length);
      const stored = await query<{ id: string; name: string }>(
        database.url,
        'SELECT id, name FROM pets WHERE id = ANY($1::bigint[])',
        [ids],
      );
      expect(new Map(stored.map(({ id, name }) => [Number(id), name]))).toEqual(
        new Map(created.map(({ name }, i) => [ids[i], name])),
      );
      console.log(
        `[postgres] 2 replicas: ${ids.length} concurrent creates, ids all unique and stored`,
      );
    });

    it('a pet created on one replica is read at once on the other', async () => {
      for (let i = 0; i < 20; i++) {
        const [writer, reader] = i % 2 === 0 ? clients : [...clients].reverse();
        const created = await writer.post('/v1/pets', {
          name: `read-your-write ${i}`,
          categoryId: 4,
        });
        expect(created.status).toBe(201);
        const { id } = created.body as { id: number };

        const read = await reader.get(`/v1/pets/${id}`);
        expect(read).toMatchObject({ status: 200, body: created.body });
      }
    });

    it('the same Idempotency-Key sent to both replicas at once creates one pet', async () => {
      const keys = Array.from({ length: 30 }, (_, i) => `replica-retry-${i}`);
      const answers = await Promise.all(
        keys.map((key, i) =>
          Promise.all(
            clients.map((client) =>
              client.post(
                '/v1/pets',
                { name: `retried ${i}`, categoryId: 6 },
                { 'idempotency-key': key },
              ),
            ),
          ),
        ),
      );

      for (const [one, other] of answers) {
        expect(one.status).toBe(201);
        expect(other).toMatchObject({ status: 201, body: one.body });
      }
      const [{ pets }] = await query<{ pets: number }>(
        database.url,
        "SELECT count(*)::int AS pets FROM pets WHERE name LIKE 'retried %'",
      );
      expect(pets).toBe(keys.length);
    });

    it('a key whose expiry passes gets 401 on both replicas within 5 s', async () => {
      const key = (
        await runApiKeyCli(['create', 'expiring', '--expires-in', '1d'], database.url)
      ).stdout.trim();
      const expiring = replicas.map((replica) => apiClient(replica.baseUrl, key, 2));
      try {
        for (const client of expiring) {
          expect((await client.get('/v1/pets?limit=1')).status).toBe(200);
        }
        // The day passes: the expiry moves into the past in the database, never the clock.
        const expiredAt = Date.now();
        await query(
          database.url,
          "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE name = 'expiring'",
        );
        const refusedAfterMs = await Promise.all(
          expiring.map((client) => msUntilRefused(client, expiredAt)),
        );
        console.log(
          `[postgres] expired key refused by the replicas after ${refusedAfterMs.join(' and ')} ms`,
        );
        for (const ms of refusedAfterMs) expect(ms).toBeLessThanOrEqual(REVOCATION_MS);
      } finally {
        for (const client of expiring) client.close();
      }
    });

    it('a key revoked through the CLI gets 401 on both replicas within 5 s', async () => {
      // Both replicas have just verified the key, so each holds it in its short-lived cache.
      for (const client of clients) expect((await client.get('/v1/pets?limit=1')).status).toBe(200);

      // Counted from before the CLI starts: stricter than from its commit.
      const revokedAt = Date.now();
      const revoked = await runApiKeyCli(['revoke', String(keyId)], database.url);
      expect(revoked.code).toBe(0);
      const refusedAfterMs = await Promise.all(
        clients.map((client) => msUntilRefused(client, revokedAt)),
      );
      console.log(
        `[postgres] revoked key refused by the replicas after ${refusedAfterMs.join(' and ')} ms`,
      );
      for (const ms of refusedAfterMs) expect(ms).toBeLessThanOrEqual(REVOCATION_MS);
    });
  },
);

/**
 * Milliseconds from `since` until `client`'s key gets the invalid-key 401 (Infinity if it still
 * works after REVOCATION_MS); every answer before that must be a 200.
 */
async function msUntilRefused(client: ApiClient, since: number): Promise<number> {
  while (Date.now() - since <= REVOCATION_MS) {
    const answer = await client.get('/v1/pets?limit=1');
    if (answer.status === 401) {
      expect(answer.body).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Invalid API key',
        status: 401,
      });
      expect(answer.headers?.['www-authenticate']).toBe('Bearer realm="animal-store"');
      return Date.now() - since;
    }
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Infinity;
}
