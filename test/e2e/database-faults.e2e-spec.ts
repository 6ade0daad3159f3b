import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dataSourceOptions } from '../../src/database/data-source.js';
import {
  apiClient,
  DATABASE_UNAVAILABLE,
  inParallel,
  tally,
  type ApiClient,
  type Outcome,
} from '../support/http-client.js';
import { migrateTogether } from '../support/migrate-together.js';
import { startPgCluster, type PgCluster } from '../support/pg-cluster.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { ENGINES } from '../support/test-database.js';

const Database = betterSqlite3();

const SERVER_ENV = { NODE_ENV: 'production', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0' };

/** Longest a request may take while the database is down: a client must not hang. */
const OUTAGE_ANSWER_MS = 5_000;
/** Longest the same process may take to serve again once the database is back. */
const RECOVERY_MS = 30_000;
/** Longer than the 2 s a verified key is cached, so the guard's own lookup also meets the outage. */
const OUTAGE_PROBE_MS = 3_000;

const MIGRATION_COUNT = (dataSourceOptions({ type: 'sqlite', path: ':memory:' }).migrations as [])
  .length;

const SERVICE_NOT_READY = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The database is unavailable; retry later',
  status: 503,
};

async function createKey(databaseUrl: string, name: string): Promise<string> {
  const created = await runApiKeyCli(['create', name], databaseUrl);
  expect(created.stderr).toBe('');
  return created.stdout.trim();
}

describe.skipIf(!ENGINES.includes('postgres'))(
  'a PostgreSQL restart under a running server [postgres]',
  () => {
    let cluster: PgCluster;
    let server: ServerProcess;
    let api: ApiClient;
    let probes: ApiClient;

    beforeAll(async () => {
      cluster = await startPgCluster();
      server = await startServer({ ...SERVER_ENV, DATABASE_URL: cluster.url });
      const key = await createKey(cluster.url, 'faults');
      api = apiClient(server.baseUrl, key);
      probes = apiClient(server.baseUrl, null);
    });
    afterAll(async () => {
      api?.close();
      probes?.close();
      server?.child.kill('SIGKILL');
      await cluster?.destroy();
    });

    it.each(['fast', 'immediate'] as const)(
      'answers 503 within 5 s while PostgreSQL is down (%s stop), and the same process serves again within 30 s',
      async (mode) => {
        const pid = server.child.pid;
        expect((await api.post('/v1/pets', { name: 'before', categoryId: 1 })).status).toBe(201);
        // Creates keep arriving before, during and after the outage, some in flight as it starts.
        const load = startCreating(api, `${mode} load`);
        await new Promise((resolve) => setTimeout(resolve, 300));

        await cluster.stop(mode);
        const downAt = Date.now();
        const outage = await probeOutage(api, probes);
        const restartAt = Date.now();
        await cluster.start();
        const recoveryMs = await timeToServe(api, probes);
        const creates = await load.stop();

        const duringOutage = [
          ...outage.api,
          ...creates
            .filter(({ sentAt }) => sentAt >= downAt && sentAt < restartAt)
            .map(({ outcome }) => outcome),
        ];
        console.log(
          `[postgres] ${mode} stop: ${duringOutage.length} API requests during the outage ` +
            `${JSON.stringify(tally(duringOutage))}, slowest ${Math.max(...duringOutage.map((o) => o.ms))} ms; ` +
            `ready ${JSON.stringify(tally(outage.ready))}, live ${JSON.stringify(tally(outage.live))}; ` +
            `serving again ${recoveryMs} ms after PostgreSQL accepted connections; ` +
            `background creates over the whole cycle ${JSON.stringify(tally(creates.map(({ outcome }) => outcome)))}`,
        );
        for (const answer of [...outage.api, ...creates.map(({ outcome }) => outcome)]) {
          expect(answer.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
          if (answer.status === 503) {
            expect(answer.body).toEqual(DATABASE_UNAVAILABLE);
            expect(answer.headers?.['retry-after']).toBe('1');
          } else {
            expect(answer.status, JSON.stringify(answer)).toSatisfy(isSuccess);
          }
        }
        expect(duringOutage.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
        for (const answer of outage.ready) {
          expect(answer).toMatchObject({ status: 503, body: SERVICE_NOT_READY });
        }
        for (const answer of outage.live) {
          expect(answer).toMatchObject({ status: 200, body: { status: 'ok' } });
        }
        expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_MS);
        // The same process, never restarted, never answered a 500.
        expect(server.child.pid).toBe(pid);
        expect(server.child.exitCode).toBeNull();
        expect(server.output()).not.toContain('"status":500');
        // A 201 given just before or after the outage is a stored pet.
        const acked = creates.filter(({ outcome }) => outcome.status === 201);
        expect(acked.length).toBeGreaterThan(0);
        const stored = await storedNames(
          cluster.url,
          acked.map(({ outcome }) => (outcome.body as { id: number }).id),
        );
        expect(stored).toEqual(
          new Map(acked.map(({ name, outcome }) => [(outcome.body as { id: number }).id, name])),
        );
      },
    );

    it('after a restart while idle, the very first request is served, not failed on a dead pooled connection', async () => {
      // Fill the pool with connections that the restart will kill.
      await inParallel(20, 10, () => api.get('/v1/pets?limit=1'));

      await cluster.stop('fast');
      await cluster.start();

      expect((await api.get('/v1/pets?limit=1')).status).toBe(200);
      expect(
        (await api.post('/v1/pets', { name: 'after idle restart', categoryId: 1 })).status,
      ).toBe(201);
    });
  },
);

interface OutageAnswers {
  api: Outcome[];
  ready: Outcome[];
  live: Outcome[];
}

/** Keeps asking every kind of request, on kept-alive sockets, for OUTAGE_PROBE_MS. */
async function probeOutage(api: ApiClient, probes: ApiClient): Promise<OutageAnswers> {
  const answers: OutageAnswers = { api: [], ready: [], live: [] };
  const until = Date.now() + OUTAGE_PROBE_MS;
  for (let round = 0; Date.now() < until; round++) {
    const [list, get, create, ready, live] = await Promise.all([
      api.get('/v1/pets?limit=5'),
      api.get('/v1/pets/1'),
      api.post('/v1/pets', { name: `during outage ${round}`, categoryId: 1 }),
      probes.get('/health/ready'),
      probes.get('/health/live'),
    ]);
    answers.api.push(list, get, create);
    answers.ready.push(ready);
    answers.live.push(live);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return answers;
}

interface SentCreate {
  name: string;
  sentAt: number;
  outcome: Outcome;
}

/** Two clients creating pets back to back (with a short pause, to leave CPU for the server). */
function startCreating(api: ApiClient, label: string): { stop(): Promise<SentCreate[]> } {
  const sent: SentCreate[] = [];
  let running = true;
  const worker = async (worker: number) => {
    for (let i = 0; running; i++) {
      const name = `${label} ${worker}-${i}`;
      const sentAt = Date.now();
      sent.push({ name, sentAt, outcome: await api.post('/v1/pets', { name, categoryId: 2 }) });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all([worker(0), worker(1)]);
  return {
    stop: async () => {
      running = false;
      await done;
      return sent;
    },
  };
}

async function storedNames(databaseUrl: string, ids: number[]): Promise<Map<number, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; name: string }>(
      'SELECT id, name FROM pets WHERE id = ANY($1::bigint[])',
      [ids],
    );
    return new Map(rows.map(({ id, name }) => [Number(id), name]));
  } finally {
    await client.end();
  }
}

/** Milliseconds until a create answers 201 and readiness 200 again. */
async function timeToServe(api: ApiClient, probes: ApiClient): Promise<number> {
  const startedAt = Date.now();
  while (Date.now() - startedAt <= RECOVERY_MS) {
    const [create, ready] = await Promise.all([
      api.post('/v1/pets', { name: 'after outage', categoryId: 1 }),
      probes.get('/health/ready'),
    ]);
    if (create.status === 201 && ready.status === 200) return Date.now() - startedAt;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Infinity;
}

function isSuccess(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status < 300;
}

describe('SQLite: concurrent writer processes and a SIGKILL mid-write', () => {
  let dir: string;
  const servers: ServerProcess[] = [];
  const clients: ApiClient[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'animal-store-faults-'));
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    for (const server of servers.splice(0)) server.child.kill('SIGKILL');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('two server processes started together on one empty file migrate it once and take concurrent creates without a 500', async () => {
    const file = join(dir, 'shared.sqlite');
    const env = { ...SERVER_ENV, DATABASE_URL: `sqlite:${file}` };
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
    const key = await createKey(env.DATABASE_URL, 'writers');
    clients.push(...servers.map((server) => apiClient(server.baseUrl, key, 16)));

    const perProcess = 150;
    // Every fifth request lists, every fifth is a retry-safe create whose Idempotency-Key both
    // processes receive at about the same moment, the rest are plain creates.
    const results = await Promise.all(
      clients.map((client, writer) =>
        inParallel(perProcess, 16, (i) => {
          if (i % 5 === 4) return client.get('/v1/pets?limit=100');
          if (i % 5 === 3) {
            const pet = { name: `shared ${i}`, categoryId: 1 };
            return client.post('/v1/pets', pet, { 'idempotency-key': `shared-${i}` });
          }
          return client.post('/v1/pets', { name: `writer ${writer}-${i}`, categoryId: 1 + i });
        }),
      ),
    );
    const outcomes = results.flat();
    console.log(
      `[sqlite] 2 processes, ${outcomes.length} concurrent requests: ${JSON.stringify(tally(outcomes))}`,
    );

    expect(outcomes.filter((outcome) => outcome.status !== 201 && outcome.status !== 200)).toEqual(
      [],
    );
    const idOf = (outcome: Outcome) => (outcome.body as { id: number }).id;
    const [first, second] = results;
    const shared = first.flatMap((outcome, i) => (i % 5 === 3 ? [[outcome, second[i]]] : []));
    for (const [one, other] of shared) expect(idOf(one)).toBe(idOf(other));
    const plainIds = results.flatMap((outcomes) => outcomes.filter((_, i) => i % 5 < 3).map(idOf));
    const createdIds = [...plainIds, ...shared.map(([one]) => idOf(one))];
    expect(new Set(createdIds).size).toBe(createdIds.length);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM pets').get()).toEqual({
        n: createdIds.length,
      });
      expect(db.prepare('SELECT count(*) AS n FROM migrations').get()).toEqual({
        n: MIGRATION_COUNT,
      });
    } finally {
      db.close();
    }
  });

  it('processes opening one new file at the same instant all start, and migrate it once', async () => {
    const file = join(dir, 'raced.sqlite');
    const opened = await migrateTogether(`sqlite:${file}`, 4);

    expect(opened.map(({ code, stdout }) => ({ code, stdout }))).toEqual(
      Array(4).fill({ code: 0, stdout: 'migrated\n' }),
    );
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM migrations').get()).toEqual({
        n: MIGRATION_COUNT,
      });
    } finally {
      db.close();
    }
  });

  it('a server killed with SIGKILL mid-burst leaves a file that reopens, passes integrity_check and holds every acknowledged pet', async () => {
    const file = join(dir, 'killed.sqlite');
    const env = { ...SERVER_ENV, DATABASE_URL: `sqlite:${file}` };
    const key = await createKey(env.DATABASE_URL, 'burst');
    const first = await startServer(env);
    servers.push(first);
    const client = apiClient(first.baseUrl, key, 16);
    clients.push(client);

    let acknowledged = 0;
    const burst = inParallel(400, 16, async (i) => {
      const outcome = await client.post('/v1/pets', { name: `burst ${i}`, categoryId: 7 });
      if (outcome.status === 201 && ++acknowledged === 100) first.child.kill('SIGKILL');
      return { name: `burst ${i}`, outcome };
    });
    const sent = await burst;
    expect(await first.exited).toBeNull();
    expect(first.child.signalCode).toBe('SIGKILL');
    // Killed mid-use: the WAL still holds commits the next open has to recover.
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);

    const second = await startServer(env);
    servers.push(second);
    const reopened = apiClient(second.baseUrl, key);
    clients.push(reopened);
    expect((await reopened.get('/health/ready')).status).toBe(200);
    expect((await reopened.post('/v1/pets', { name: 'after kill', categoryId: 7 })).status).toBe(
      201,
    );

    const acked = sent.filter(({ outcome }) => outcome.status === 201);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      const stored = new Map(
        (
          db.prepare('SELECT id, name, category_id AS categoryId FROM pets').all() as {
            id: number;
            name: string;
            categoryId: number;
          }[]
        ).map((row) => [row.id, row]),
      );
      for (const { name, outcome } of acked) {
        const { id } = outcome.body as { id: number };
        expect(stored.get(id)).toEqual({ id, name, categoryId: 7 });
      }
      console.log(
        `[sqlite] SIGKILL after ${acked.length} acknowledged creates: ${JSON.stringify(
          tally(sent.map(({ outcome }) => outcome)),
        )}; ${stored.size} rows after restart, integrity_check ok`,
      );
    } finally {
      db.close();
    }
    expect(sent.every(({ outcome }) => outcome.status === 201 || outcome.error)).toBe(true);
  });
});
