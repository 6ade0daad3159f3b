import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { type Engine, ENGINES } from '../support/test-database.js';

describe.each(ENGINES)('HTTP behaviour [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());

  describe('unknown routes and methods', () => {
    it.each([
      '/v1/nothing',
      '/v1/pets/1/owner',
      '/v2/pets',
      '/',
      '/v1/pets/',
      '/docs/no-such-file.js',
      '/docs/LICENSE',
    ])('answers 404 for %s', async (url) => {
      const response = await t.request('GET', url);

      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual({ code: 'NOT_FOUND', message: 'No such route', status: 404 });
    });

    it.each([
      ['OPTIONS', '/v1/pets/1', 'DELETE, GET, HEAD, PATCH'],
      ['PUT', '/v1/pets/1', 'DELETE, GET, HEAD, PATCH'],
      ['PATCH', '/v1/pets', 'GET, HEAD, POST'],
      ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
      ['POST', '/health/live', 'GET, HEAD'],
    ] as const)('answers 405 for %s %s with Allow: %s', async (method, url, allow) => {
      const response = await t.request(method, url);

      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe(allow);
      expect(response.json()).toEqual({
        code: 'METHOD_NOT_ALLOWED',
        message: `Method ${method} is not allowed here; use ${allow}`,
        status: 405,
      });
    });

    it('keeps the 413 of a body over the limit sent to an unknown route', async () => {
      const response = await t.request('POST', '/v1/nothing', { body: 'x'.repeat(20_000) });

      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request body exceeds 16384 bytes',
        status: 413,
      });
    });
  });

  describe('response hygiene', () => {
    it('sends nosniff, a request id and no X-Powered-By on success and on errors; no-store unless the answer has an ETag', async () => {
      for (const [url, key, cacheControl] of [
        ['/v1/pets', undefined, 'private, no-cache'],
        ['/v1/pets', null, 'no-store'],
        ['/nowhere', undefined, 'no-store'],
        ['/health/live', null, 'no-store'],
      ] as const) {
        const response = await t.request('GET', url, { key });
        expect(response.headers['cache-control']).toBe(cacheControl);
        expect(response.headers['x-content-type-options']).toBe('nosniff');
        expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
        expect(response.headers['x-powered-by']).toBeUndefined();
      }
    });

    it('echoes a sane incoming X-Request-Id and replaces anything else', async () => {
      const echoed = await t.request('GET', '/v1/pets', {
        headers: { 'x-request-id': 'client-42.a:b_c' },
      });
      expect(echoed.headers['x-request-id']).toBe('client-42.a:b_c');

      for (const insane of ['has space', 'x'.repeat(129), 'quote"d', '<script>']) {
        const replaced = await t.request('GET', '/v1/pets', {
          headers: { 'x-request-id': insane },
        });
        expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
    });
  });

  describe('malformed requests', () => {
    it.each(['/v1/pets/%E0%A4%A', `/v1/pets/${'1'.repeat(300)}`])(
      'answers 400 with the Error body and the usual headers for the unroutable URL %s',
      async (url) => {
        const response = await t.request('GET', url, { headers: { 'x-request-id': 'bad-url-1' } });

        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({
          code: 'VALIDATION_FAILED',
          message: 'The request URL is malformed',
          status: 400,
        });
        expect(response.headers).toMatchObject({
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'x-request-id': 'bad-url-1',
        });
      },
    );
  });

  describe('database errors', () => {
    it('answers 500 INTERNAL_ERROR without SQL, table names or stack when a query fails', async () => {
      await t.dataSource.query('ALTER TABLE pets RENAME TO pets_elsewhere');
      try {
        const response = await t.request('GET', '/v1/pets');

        expect(response.statusCode).toBe(500);
        expect(response.json()).toEqual({
          code: 'INTERNAL_ERROR',
          message: 'Internal server error',
          status: 500,
        });
        expect(response.body).not.toMatch(/pets|select|sqlite|postgres|at /i);
      } finally {
        await t.dataSource.query('ALTER TABLE pets_elsewhere RENAME TO pets');
      }
    });
  });

  describe('health', () => {
    it('answers /health/live with 200 {status: ok}', async () => {
      const response = await t.request('GET', '/health/live', { key: null });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ok' });
    });

    it('answers /health/ready with 200 while the database answers', async () => {
      const response = await t.request('GET', '/health/ready', { key: null });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        status: 'ok',
        info: { database: { status: 'up', responseTime: expect.any(Number) } },
        error: {},
        details: { database: { status: 'up', responseTime: expect.any(Number) } },
      });
    });
  });
});

/**
 * Takes the app's database away: SQLite's connection is closed; PostgreSQL ends every connection to
 * the database, the pool's and the reads' own alike, and takes no new ones.
 */
async function takeDatabaseAway(t: TestApp, engine: Engine): Promise<void> {
  if (engine === 'sqlite') return t.dataSource.destroy();
  const name = new URL(t.databaseUrl).pathname.slice(1);
  const server = Object.assign(new URL(t.databaseUrl), { pathname: '/postgres' });
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      name,
    ]);
  } finally {
    await admin.end();
  }
}

describe.each(ENGINES)('health with the database gone [%s]', (engine) => {
  it('answers /health/ready with 503 SERVICE_UNAVAILABLE while /health/live stays 200', async () => {
    const t = await startTestApp(engine);
    try {
      await takeDatabaseAway(t, engine);

      const ready = await t.request('GET', '/health/ready', { key: null });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'The database is unavailable; retry later',
        status: 503,
      });
      expect((await t.request('GET', '/health/live', { key: null })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
