import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/app-config.js';
import { SqlRunner } from '../../src/database/sql-runner.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, ENGINES } from '../support/test-database.js';

const UNAUTHORIZED_INVALID = { code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401 };
const UNAUTHORIZED_MISSING = {
  code: 'UNAUTHORIZED',
  message: 'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
  status: 401,
};

describe.each(ENGINES)('authentication [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());

  const expectUnauthorized = (response: Awaited<ReturnType<TestApp['request']>>, body: object) => {
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json()).toEqual(body);
  };

  it.each([
    ['GET', '/v1/pets'],
    ['POST', '/v1/pets'],
    ['GET', '/v1/pets/1'],
    ['PATCH', '/v1/pets/1'],
  ] as const)('guards %s %s: no key, 401', async (method, url) => {
    expectUnauthorized(await t.request(method, url, { key: null }), UNAUTHORIZED_MISSING);
  });

  it.each([
    ['an unknown well-formed key', `Bearer pets_0123456789ab_${'A'.repeat(43)}`],
    ['a malformed key', 'Bearer not-a-key'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['the scheme alone', 'Bearer'],
    ['an empty header', ''],
  ])('refuses %s: 401', async (_case, authorization) => {
    expectUnauthorized(
      await t.request('GET', '/v1/pets', { key: null, headers: { authorization } }),
      UNAUTHORIZED_INVALID,
    );
  });

  it('refuses a valid key with two spaces after the scheme', async () => {
    const response = await t.request('GET', '/v1/pets', {
      key: null,
      headers: { authorization: `Bearer  ${t.key}` },
    });
    expectUnauthorized(response, UNAUTHORIZED_INVALID);
  });

  it('refuses a valid key with its secret altered', async () => {
    const tampered = t.key.slice(0, -1) + (t.key.endsWith('A') ? 'B' : 'A');
    expectUnauthorized(await t.request('GET', '/v1/pets', { key: tampered }), UNAUTHORIZED_INVALID);
  });

  it('accepts the scheme in any case (RFC 6750)', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await t.request('GET', '/v1/pets', {
        key: null,
        headers: { authorization: `${scheme} ${t.key}` },
      });
      expect(response.statusCode).toBe(200);
    }
  });

  it('reads the key from the Authorization header only, not the query string or the body', async () => {
    const inQuery = await t.request('GET', `/v1/pets?access_token=${t.key}`, { key: null });
    expectUnauthorized(inQuery, UNAUTHORIZED_MISSING);
    const inBody = await t.request('POST', '/v1/pets', {
      key: null,
      body: { name: 'Rex', categoryId: 1, access_token: t.key },
    });
    expectUnauthorized(inBody, UNAUTHORIZED_MISSING);
  });

  it('authenticates before validating: a bad body without a key is a 401', async () => {
    expectUnauthorized(
      await t.request('POST', '/v1/pets', { key: null, body: '{not json' }),
      UNAUTHORIZED_MISSING,
    );
    expectUnauthorized(
      await t.request('POST', '/v1/pets', { key: null, body: { id: 1 } }),
      UNAUTHORIZED_MISSING,
    );
    const notJson = await t.request('POST', '/v1/pets', {
      key: null,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expectUnauthorized(notJson, UNAUTHORIZED_MISSING);
  });

  it('stores only the prefix and SHA-256 of a key, never the key', async () => {
    const { key, summary } = await t.app.get(ApiKeyStore).create('hashed-at-rest');
    const [row] = await t.dataSource.query(`SELECT * FROM api_keys WHERE id = ${summary.id}`);

    expect(row.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(key.startsWith(`pets_${row.prefix}_`)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(key.slice(`pets_${row.prefix}_`.length));
  });

  it('refuses a revoked key within 5 seconds', async () => {
    const apiKeys = t.app.get(ApiKeyStore);
    const { key, summary } = await apiKeys.create('to-revoke');
    expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);

    await apiKeys.revoke(summary.id);
    const revokedAt = Date.now();
    let response = await t.request('GET', '/v1/pets', { key });
    while (response.statusCode === 200 && Date.now() - revokedAt < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await t.request('GET', '/v1/pets', { key });
    }
    expectUnauthorized(response, UNAUTHORIZED_INVALID);
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
  });

  it('looks a key up once for all the requests that miss the cache together', async () => {
    const { key } = await t.app.get(ApiKeyStore).create('herd');
    const read = vi.spyOn(t.app.get(SqlRunner), 'read');
    try {
      const statuses = await Promise.all(
        Array.from(
          { length: 20 },
          async () => (await t.request('GET', '/v1/pets', { key })).statusCode,
        ),
      );
      const keyLookups = read.mock.calls.filter(([sql]) => sql.includes('FROM api_keys'));
      expect(statuses).toEqual(Array(20).fill(200));
      expect(keyLookups, `${keyLookups.length} lookups for 20 concurrent requests`).toHaveLength(1);
    } finally {
      read.mockRestore();
    }
  });

  it('leaves health checks public', async () => {
    expect((await t.request('GET', '/health/live', { key: null })).statusCode).toBe(200);
    expect((await t.request('GET', '/health/ready', { key: null })).statusCode).toBe(200);
  });
});

describe('first start with an empty key store', () => {
  it('creates one key named "local" outside production', async () => {
    const t = await startTestApp('sqlite', { NODE_ENV: 'development' });
    try {
      const names = (await t.app.get(ApiKeyStore).list()).map((key) => key.name);
      expect(names).toEqual(['local', 'e2e']);
    } finally {
      await t.close();
    }
  });

  it('creates none when every key is revoked: an empty store is one with no key at all', async () => {
    const database = await createTestDatabase('sqlite');
    const config = loadConfig({
      NODE_ENV: 'development',
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.url,
    });
    try {
      const first = await createApp(config);
      const [local] = await first.get(ApiKeyStore).list();
      await first.get(ApiKeyStore).revoke(local.id);
      await first.close();

      const second = await createApp(config);
      const keys = await second.get(ApiKeyStore).list();
      await second.close();
      expect(keys.map(({ name, revokedAt }) => [name, revokedAt !== null])).toEqual([
        ['local', true],
      ]);
    } finally {
      await database.drop();
    }
  });

  it('creates none in production', async () => {
    const t = await startTestApp('sqlite', { NODE_ENV: 'production' });
    try {
      expect((await t.app.get(ApiKeyStore).list()).map((key) => key.name)).toEqual(['e2e']);
    } finally {
      await t.close();
    }
  });
});
