import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiClient,
  DATABASE_UNAVAILABLE,
  inParallel,
  tally,
  type ApiClient,
} from '../support/http-client.js';
import { freePort } from '../support/free-port.js';
import { startPgCluster, type PgCluster } from '../support/pg-cluster.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { ENGINES } from '../support/test-database.js';

/** A pet only the read node holds: an answer that includes it came from the read node. */
const READ_NODE_PET = { id: 900_001, name: 'only on the read node', categoryId: 7 };

async function query(url: string, sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

async function copyApiKeys(fromUrl: string, toUrl: string): Promise<void> {
  const from = new pg.Client({ connectionString: fromUrl });
  await from.connect();
  try {
    const { rows } = await from.query<{
      name: string;
      prefix: string;
      key_hash: string;
      scopes: string;
    }>('SELECT name, prefix, key_hash, scopes FROM api_keys');
    for (const row of rows)
      await query(
        toUrl,
        'INSERT INTO api_keys (name, prefix, key_hash, scopes) VALUES ($1, $2, $3, $4)',
        [row.name, row.prefix, row.key_hash, row.scopes],
      );
  } finally {
    await from.end();
  }
}

/**
 * DATABASE_READ_URL on two throw-away PostgreSQL servers, primary and read node (the read node is not a real standby:
 * it holds the same schema and a pet of its own, so an answer shows which server gave it). The cluster tests
 * (test/e2e/cluster/) run the real topology; this one stops the read node at will.
 */
describe.skipIf(!ENGINES.includes('postgres'))(
  'DATABASE_READ_URL: reads on the read node, falling back to the primary [postgres]',
  () => {
    let primary: PgCluster;
    let readNode: PgCluster;
    let server: ServerProcess;
    let api: ApiClient;
    let webhooksApi: ApiClient;
    let created: { id: number; name: string };
    let metricsUrl: string;

    /** One sample of the service's /metrics, 0 when absent. */
    async function metric(series: string): Promise<number> {
      const text = await (await fetch(metricsUrl)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    }

    beforeAll(async () => {
      primary = await startPgCluster();
      readNode = await startPgCluster();
      // The CLI migrates each database it opens: both get the schema.
      expect((await runApiKeyCli(['create', 'read-node'], readNode.url)).code).toBe(0);
      const key = (await runApiKeyCli(['create', 'reads'], primary.url)).stdout.trim();
      const webhooksKey = (
        await runApiKeyCli(['create', 'webhooks', '--scopes', 'webhooks:manage'], primary.url)
      ).stdout.trim();
      // Key lookups read on the read node too: it gets the key's row, as a standby would.
      await copyApiKeys(primary.url, readNode.url);
      await query(readNode.url, 'INSERT INTO pets (id, name, category_id) VALUES ($1, $2, $3)', [
        READ_NODE_PET.id,
        READ_NODE_PET.name,
        READ_NODE_PET.categoryId,
      ]);
      const metricsPort = await freePort();
      metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      server = await startServer({
        NODE_ENV: 'production',
        RATE_LIMIT_PER_MINUTE: '0',
        DATABASE_URL: primary.url,
        DATABASE_READ_URL: readNode.url,
        METRICS_PORT: String(metricsPort),
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      });
      api = apiClient(server.baseUrl, key, 8);
      webhooksApi = apiClient(server.baseUrl, webhooksKey, 1);
      const answer = await api.post('/v1/pets', { name: 'written to the primary', categoryId: 1 });
      expect(answer.status).toBe(201);
      created = answer.body as { id: number; name: string };
    }, 60_000);
    afterAll(async () => {
      api?.close();
      webhooksApi?.close();
      server?.child.kill('SIGKILL');
      await readNode?.destroy();
      await primary?.destroy();
    });

    it('sends pet reads to the read node and writes to the primary', async () => {
      const list = await api.get('/v1/pets?limit=100');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([READ_NODE_PET]);
      expect((await api.get(`/v1/pets/${READ_NODE_PET.id}`)).body).toEqual(READ_NODE_PET);
      // Metrics: the reads are timed under the replica role, the create under the primary.
      expect(
        await metric(
          'animal_store_db_query_duration_seconds_count{operation="SELECT pets",role="replica"}',
        ),
      ).toBeGreaterThanOrEqual(2);
      expect(
        await metric(
          'animal_store_db_query_duration_seconds_count{operation="INSERT pets + INSERT pet_events",role="primary"}',
        ),
      ).toBe(1);
    });

    it("starts a new webhook after the primary's newest event, not the read node's", async () => {
      // The read node holds none of the primary's events: a start read there would be (0, 0),
      // and the webhook would be sent the events committed before it.
      const created = await webhooksApi.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook' });
      expect(created.status).toBe(201);
      const client = new pg.Client({ connectionString: primary.url });
      await client.connect();
      try {
        const { rows: newest } = await client.query(
          'SELECT tx::text, seq::text FROM pet_events ORDER BY tx DESC, seq DESC LIMIT 1',
        );
        const { rows: start } = await client.query(
          'SELECT after_tx::text AS tx, after_seq::text AS seq FROM webhook_subscriptions WHERE id = $1',
          [(created.body as { id: number }).id],
        );
        expect(newest).toHaveLength(1);
        expect(start).toEqual(newest);
      } finally {
        await client.end();
      }
    });

    it('answers every read from the primary while the read node stops and stays down', async () => {
      // Reads in flight while the read node shuts down (57P01, resets), then refused connections.
      let stopping = true;
      const reads = Promise.all(
        Array.from({ length: 4 }, async () => {
          const outcomes = [];
          while (stopping) {
            // A list is a 200 from either server (a get of one pet would be a 404 on one of them).
            outcomes.push(await api.get('/v1/pets?limit=100'));
          }
          return outcomes;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await readNode.stop('fast');
      const down = await inParallel(100, 8, (index) =>
        api.get(index % 2 ? '/v1/pets?limit=100' : `/v1/pets/${created.id}`),
      );
      stopping = false;
      const during = (await reads).flat();
      const all = [...during, ...down];
      expect(
        all.every((outcome) => outcome.status === 200),
        `while the read node stopped: ${JSON.stringify(tally(during))}; once down: ${JSON.stringify(tally(down))}`,
      ).toBe(true);
      // Once it is down, the answers are the primary's.
      expect(down[1].body).toEqual([created]);
      expect(down[0].body).toMatchObject(created);
      expect((await api.get('/health/ready')).status).toBe(200);
      expect(await metric('animal_store_db_read_fallbacks_total')).toBeGreaterThanOrEqual(100);
    });

    it('sends reads to the read node again once it is back', async () => {
      await readNode.start();
      const list = await api.get('/v1/pets?limit=100');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([READ_NODE_PET]);
    });

    it('answers 503 SERVICE_UNAVAILABLE with Retry-After when neither server can serve', async () => {
      await readNode.stop('immediate');
      await primary.stop('immediate');
      try {
        const answer = await api.get('/v1/pets?limit=100');
        expect(answer.status).toBe(503);
        expect(answer.headers?.['retry-after']).toBe('1');
        expect(answer.body).toEqual(DATABASE_UNAVAILABLE);
      } finally {
        await primary.start();
        await readNode.start();
      }
    });
  },
);
