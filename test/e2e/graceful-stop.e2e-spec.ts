import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import { request } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, inParallel, tally, type Outcome } from '../support/http-client.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import {
  createTestDatabase,
  ENGINES,
  type Engine,
  type TestDatabase,
} from '../support/test-database.js';

const Database = betterSqlite3();

/** main.ts gives up (exit 1) after this long; a clean stop must end well before. */
const STOP_DEADLINE_MS = 10_000;
const BURST = 200;
const CONNECTIONS = 16;
/** SIGTERM goes out once this many creates have been acknowledged: mid-burst. */
const ACKNOWLEDGED_BEFORE_SIGTERM = 50;
/** How a request can end without an answer when the server stops taking connections. */
const REFUSED = ['ECONNREFUSED', 'ECONNRESET', 'EPIPE'];

interface NewPet {
  name: string;
  categoryId: number;
  status: string;
}

interface StoredPet {
  id: number;
  name: string;
  categoryId: number;
  status: string | null;
}

describe.each(ENGINES)('SIGTERM during a burst of creates [%s]', (engine) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    // The CLI migrates the new database, then the server starts on it.
    key = (await runApiKeyCli(['create', 'burst'], database.url)).stdout.trim();
    server = await startServer({
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_URL: database.url,
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await database?.drop();
  });

  it('answers or refuses every request, stores every 201 whole, and exits 0 within 10 s', async () => {
    // Half sent when SIGTERM comes, so the stop is still waiting on it after the burst is over.
    const held = holdCreate(server.baseUrl, key, {
      name: 'held',
      categoryId: 5,
      status: 'pending',
    });
    const client = apiClient(server.baseUrl, key, CONNECTIONS);
    let acknowledged = 0;
    let sigtermAt = 0;
    const exitedAfterMs = server.exited.then(() => Date.now() - sigtermAt);

    const sent = await inParallel(BURST, CONNECTIONS, async (i) => {
      const pet: NewPet = { name: `burst ${i}`, categoryId: 5, status: 'pending' };
      const outcome = await client.post('/v1/pets', pet);
      if (outcome.status === 201 && ++acknowledged === ACKNOWLEDGED_BEFORE_SIGTERM) {
        sigtermAt = Date.now();
        server.child.kill('SIGTERM');
      }
      return { pet, outcome };
    });
    client.close();

    // Stopping but not stopped: new connections are refused, not answered with a 5xx.
    expect(server.child.exitCode).toBeNull();
    const lateClient = apiClient(server.baseUrl, key);
    expect(await lateClient.get('/health/live')).toMatchObject({ error: 'ECONNREFUSED' });
    lateClient.close();
    const heldAnswer = await held.finish();
    sent.push({ pet: held.pet, outcome: heldAnswer });
    expect(heldAnswer.status).toBe(201);

    const stopMs = await exitedAfterMs;
    expect(await server.exited).toBe(0);
    expect(stopMs).toBeLessThanOrEqual(STOP_DEADLINE_MS);
    expect(server.output()).toContain('"msg":"stopped"');
    // Every request got its 201, or was refused at the connection: no 5xx, no other answer.
    for (const { outcome } of sent) {
      expect(outcome.status === 201 || REFUSED.includes(outcome.error!), summary(outcome)).toBe(
        true,
      );
    }

    const stored = new Map((await storedPets(engine, database.url)).map((pet) => [pet.id, pet]));
    const acked = sent.filter(({ outcome }) => outcome.status === 201);
    for (const { pet, outcome } of acked) {
      const { id } = outcome.body as { id: number };
      expect(outcome.body).toEqual({ id, ...pet });
      expect(stored.get(id)).toEqual({ id, ...pet });
    }
    // A stored pet nobody was told about can only come from a request cut off mid-answer.
    const ackedIds = new Set(acked.map(({ outcome }) => (outcome.body as { id: number }).id));
    const unacknowledged = [...stored.values()].filter((pet) => !ackedIds.has(pet.id));
    const cutOffNames = new Set(
      sent.filter(({ outcome }) => outcome.error).map(({ pet }) => pet.name),
    );
    for (const pet of unacknowledged) {
      expect(cutOffNames.has(pet.name)).toBe(true);
      expect(pet).toMatchObject({ categoryId: 5, status: 'pending' });
    }
    console.log(
      `[${engine}] SIGTERM after ${ACKNOWLEDGED_BEFORE_SIGTERM} of ${BURST} creates: ` +
        `${JSON.stringify(tally(sent.map(({ outcome }) => outcome)))}; ` +
        `${acked.length} 201s found stored, ${unacknowledged.length} stored rows unacknowledged; ` +
        `exit 0 after ${stopMs} ms`,
    );
  });
});

/** A create whose body is only half sent until `finish()`. */
function holdCreate(baseUrl: string, key: string, pet: NewPet) {
  const body = JSON.stringify(pet);
  const outgoing = request(new URL('/v1/pets', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    },
  });
  const answer = new Promise<Outcome>((resolve) => {
    outgoing.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode, body: JSON.parse(text), ms: 0 }),
      );
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code, ms: 0 }));
  });
  outgoing.write(body.slice(0, 10));
  return {
    pet,
    finish: () => {
      outgoing.end(body.slice(10));
      return answer;
    },
  };
}

function summary(outcome: Outcome): string {
  return JSON.stringify({ status: outcome.status, error: outcome.error, body: outcome.body });
}

async function storedPets(engine: Engine, databaseUrl: string): Promise<StoredPet[]> {
  const sql = 'SELECT id, name, category_id AS "categoryId", status FROM pets';
  if (engine === 'sqlite') {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      return db.prepare(sql).all() as StoredPet[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = (await client.query(sql)).rows as (StoredPet & {
      id: string;
      categoryId: string;
    })[];
    return rows.map((row) => ({ ...row, id: Number(row.id), categoryId: Number(row.categoryId) }));
  } finally {
    await client.end();
  }
}
