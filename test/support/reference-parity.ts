import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import pg from 'pg';
import { expect } from 'vitest';
import { runApiKeyCli, startReference, startServer, type ServerProcess } from './processes.js';
import {
  copyPostgresTestDatabase,
  createTestDatabase,
  type Engine,
  type TestDatabase,
} from './test-database.js';

const Database = betterSqlite3();

/**
 * What the reference-parity suites share. The benchmark's reference implementation
 * (bench/reference) must answer exactly as the service does, or the race between them measures
 * different work. Each suite starts both on copies of one seeded database, sends each case to
 * both, and compares status, body and the headers that carry meaning.
 */

/** The largest id the API accepts (2^53-1). */
export const MAX_ID = 9007199254740991;

/** Pets both servers start with; a pet created through the API gets the next id. */
export const SEEDED_PETS = 25;

export type Headers = Record<string, string | string[]>;

/**
 * A request as a case describes it. An Authorization header may name the placeholders KEY,
 * REVOKED_KEY, TAMPERED_KEY or READ_ONLY_KEY: keys exist only once the database does, so they go
 * in at send time.
 */
export interface CaseRequest {
  headers?: Headers;
  body?: string | Buffer;
  /** null: send no X-Request-Id of our own, so the server generates one. */
  requestId?: null;
  /** false: send no Host header (Node's client adds one otherwise). */
  setHost?: false;
}

/** [what the case is about, status the service must answer, method, path, request]. */
export type ParityCase = [string, number, string, string, CaseRequest];

// Request shapes the case tables are written with.
export const auth = { authorization: 'Bearer KEY' };
export const asJson = { ...auth, 'content-type': 'application/json' };
export const gzipped = { ...asJson, 'content-encoding': 'gzip' };
/** A body sent as JSON with a valid key. */
export const json = (body: unknown): CaseRequest => ({
  headers: asJson,
  body: JSON.stringify(body),
});
/** Bytes sent as they are, labelled JSON, with a valid key. */
export const raw = (body: string | Buffer): CaseRequest => ({ headers: asJson, body });

/** The cursor the service hands out for the page that ends at `lastId`. */
export function cursor(lastId: number): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

export interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface SentRequest {
  method: string;
  path: string;
  headers: Headers;
  body?: string | Buffer;
  setHost?: false;
}

/** The service and the reference, serving copies of the same database, and the keys in it. */
export interface ParityPair {
  service: ServerProcess;
  reference: ServerProcess;
  /** A valid key. */
  key: string;
  /** Revoked before either server saw it, so neither has it in its verified-key cache. */
  revokedKey: string;
  /** A valid key with the pets:read scope alone. */
  readOnlyKey: string;
  /** The DATABASE_URL each server runs on (`sqlite:<path>` or `postgres://…`), to read what it stored. */
  databaseUrls: { service: string; reference: string };
  /**
   * Sends one case to the service, then to the reference, and holds both to the same answer:
   * the same body once `mask` has replaced what may differ (the time an order was placed).
   */
  expectSameAnswer(
    parityCase: ParityCase,
    requestId: string,
    mask?: (body: string) => string,
  ): Promise<Received[]>;
  /** Puts the real keys in place of the KEY, REVOKED_KEY, TAMPERED_KEY and READ_ONLY_KEY placeholders. */
  withKeys(headers: Headers): Headers;
  stop(): Promise<void>;
}

/**
 * Makes a fresh database on `engine`, creates the keys with the apikey CLI (which migrates it),
 * seeds SEEDED_PETS pets (one with an awkward name, some without a status) and runs the `seed`
 * statements (SQL both engines take), copies it exactly (same rows, same id counters, so created
 * pets and orders get the same ids on both), then starts the service on the original and the
 * reference on the copy.
 */
export async function startParityPair(
  engine: Engine = 'sqlite',
  { seed = [] }: { seed?: string[] } = {},
): Promise<ParityPair> {
  const original = await createTestDatabase(engine);
  const cli = (args: string[]) => runApiKeyCli(args, original.url);
  const key = (await cli(['create', 'parity'])).stdout.trim();
  const revokedKey = (await cli(['create', 'revoked'])).stdout.trim();
  const readOnlyKey = (await cli(['create', 'reader', '--scopes', 'pets:read'])).stdout.trim();
  const revokedId = /^(\d+)\s+revoked\s/m.exec((await cli(['list'])).stdout)![1];
  expect((await cli(['revoke', revokedId])).code).toBe(0);
  const pets = Array.from({ length: SEEDED_PETS }, (_, index) => seededPet(index + 1));

  let copy: TestDatabase;
  let referenceDatabase: Record<string, string>;
  if (engine === 'sqlite') {
    const db = new Database(sqlitePathOf(original.url));
    const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)');
    for (const pet of pets) insert.run(...pet);
    for (const sql of seed) db.exec(sql);
    const copyPath = `${sqlitePathOf(original.url)}.copy`;
    await db.backup(copyPath);
    db.close();
    copy = { url: `sqlite:${copyPath}`, drop: () => rm(copyPath, { force: true }) };
    referenceDatabase = { DATABASE_PATH: copyPath };
  } else {
    const client = new pg.Client({ connectionString: original.url });
    await client.connect();
    for (const pet of pets)
      await client.query('INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3)', pet);
    for (const sql of seed) await client.query(sql);
    await client.end();
    copy = await copyPostgresTestDatabase(original);
    referenceDatabase = { DATABASE_URL: copy.url };
  }

  // NODE_ENV=production so the service creates no key of its own.
  const service = await startServer({
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: original.url,
    // The reference has no rate limiter (the bench runs both without one).
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const reference = await startReference({ ...referenceDatabase, LOG_LEVEL: 'info' });

  const withKeys = (headers: Headers): Headers => {
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const placeholders: Record<string, string> = {
      KEY: key,
      REVOKED_KEY: revokedKey,
      TAMPERED_KEY: tampered,
      READ_ONLY_KEY: readOnlyKey,
    };
    const authorization = (headers.authorization as string | undefined)?.replace(
      /\b(KEY|REVOKED_KEY|TAMPERED_KEY|READ_ONLY_KEY)$/,
      (name) => placeholders[name],
    );
    return { ...headers, ...(authorization !== undefined && { authorization }) };
  };

  return {
    service,
    reference,
    key,
    revokedKey,
    readOnlyKey,
    databaseUrls: { service: original.url, reference: copy.url },
    withKeys,
    expectSameAnswer: async (
      [, status, method, path, options],
      requestId,
      mask = (body) => body,
    ) => {
      const headers = withKeys(options.headers ?? {});
      if (options.requestId !== null && !('x-request-id' in headers))
        headers['x-request-id'] = requestId;
      const sent: SentRequest = {
        method,
        path,
        headers,
        body: options.body,
        setHost: options.setHost,
      };

      const fromService = await send(service.baseUrl, sent);
      const fromReference = await send(reference.baseUrl, sent);

      expect(fromService.status).toBe(status);
      expect({ status: fromReference.status, body: mask(fromReference.body) }).toEqual({
        status: fromService.status,
        body: mask(fromService.body),
      });
      expect(meaningfulHeaders(fromReference.headers)).toEqual(
        meaningfulHeaders(fromService.headers),
      );
      expect(fromReference.headers['x-powered-by']).toBeUndefined();
      if (options.requestId === null)
        expect(fromReference.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      return [fromService, fromReference];
    },
    stop: async () => {
      // Both gone before their databases are dropped (a test may have stopped one already).
      await Promise.all([service.child, reference.child].map(killed));
      await copy.drop();
      await original.drop();
    },
  };
}

/** A row of text and integer columns, as either driver gives it (bigint as a string on PostgreSQL). */
type StoredRow = Record<string, string | number | null>;

/**
 * The rows `sql` reads from the database at `url` (`sqlite:<path>` or `postgres://…`), every value
 * as text (null as null), so both engines' rows compare equal. For text and integer columns only.
 */
export async function readRows(url: string, sql: string): Promise<Record<string, string | null>[]> {
  const asText = (row: StoredRow) =>
    Object.fromEntries(
      Object.entries(row).map(([column, value]) => [column, value === null ? null : String(value)]),
    );
  if (url.startsWith('sqlite:')) {
    const db = new Database(sqlitePathOf(url), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare(sql).all() as StoredRow[]).map(asText);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<StoredRow>(sql)).rows.map(asText);
  } finally {
    await client.end();
  }
}

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

/** [name, category id, status] of the seeded pet `id`. */
function seededPet(id: number): [string, number, string | null] {
  const statuses = ['available', 'sold', null, 'pending', 'sold'];
  return [id === 3 ? 'Ünïcødé 🐶 "quoted" \\ \n' : `pet ${id}`, (id % 4) + 1, statuses[id % 5]];
}

function sqlitePathOf(url: string): string {
  return url.slice('sqlite:'.length);
}

/** The headers whose values carry meaning; the rest (date, keep-alive) may differ. */
const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'etag',
  'x-content-type-options',
  'www-authenticate',
  'allow',
  'link',
  'location',
  'sunset',
  'deprecation',
  'retry-after',
  'accept-encoding',
  'accept-patch',
  'x-powered-by',
] as const;

/**
 * The headers two answers must agree on. The X-Request-Id counts only when it echoes ours (those
 * start with `parity-`): generated ids differ by design and are checked for shape instead.
 */
export function meaningfulHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  const picked: Record<string, unknown> = Object.fromEntries(
    COMPARED_HEADERS.map((name) => [name, headers[name]]),
  );
  picked['x-request-id'] = /^parity-/.test(String(headers['x-request-id']))
    ? headers['x-request-id']
    : 'generated';
  return picked;
}

/**
 * One request over a fresh connection, headers exactly as given (fetch would add a content type);
 * a header given as an array is sent once per value. Node's client adds the Host header (unless
 * setHost is false or the case sends its own) and the length of the body.
 */
export function send(
  baseUrl: string,
  { method, path, headers, body, setHost }: SentRequest,
): Promise<Received> {
  const { hostname, port } = new URL(baseUrl);
  const sentHeaders =
    body === undefined
      ? headers
      : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: hostname, port, method, path, agent: false, setHost },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: text }),
        );
      },
    );
    // Set here, not in the options, which refuse a Host given twice.
    for (const [name, value] of Object.entries(sentHeaders)) outgoing.setHeader(name, value);
    // A server may answer (413) before it has read the whole body; the answer is what counts.
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
