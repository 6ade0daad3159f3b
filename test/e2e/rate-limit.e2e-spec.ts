import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { startSecondInstance, startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

const expectBudget = (response: Response, limit: number, remaining: number) => {
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe(String(remaining));
  expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expect(Number(response.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
};

const expectRateLimited = (response: Response, limit: number) => {
  expect(response.statusCode).toBe(429);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  const retryAfter = response.headers['retry-after'];
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  expect(response.headers['ratelimit-remaining']).toBe('0');
  expect(response.headers['ratelimit-reset']).toBe(retryAfter);
  expect(response.json()).toEqual({
    code: 'RATE_LIMITED',
    message: `Rate limit of ${limit} requests per minute exceeded; retry in ${String(retryAfter)} s`,
    status: 429,
  });
};

const noBudgetHeaders = (response: Response) =>
  Object.keys(response.headers).filter((name) => name.startsWith('ratelimit'));

describe.each(ENGINES)('rate limits per API key [%s]', (engine) => {
  const LIMIT = 4;
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  });
  afterAll(() => t?.close());

  it('counts every operation against one budget and answers 429 past it, storing nothing', async () => {
    const { key } = await t.app.get(ApiKeyStore).create('budget');
    const list = await t.request('GET', '/v1/pets', { key });
    expect(list.statusCode).toBe(200);
    expectBudget(list, LIMIT, 3);
    const created = await t.request('POST', '/v1/pets', {
      key,
      body: { name: 'Rex', categoryId: 1 },
    });
    expect(created.statusCode).toBe(201);
    expectBudget(created, LIMIT, 2);
    const read = await t.request('GET', `/v1/pets/${created.json().id}`, { key });
    expect(read.statusCode).toBe(200);
    expectBudget(read, LIMIT, 1);
    const renamed = await t.request('PATCH', `/v1/pets/${created.json().id}`, {
      key,
      body: { name: 'Rex' },
    });
    expect(renamed.statusCode).toBe(200);
    expectBudget(renamed, LIMIT, 0);

    expectRateLimited(await t.request('GET', '/v1/pets', { key }), LIMIT);
    const refusedCreate = await t.request('POST', '/v1/pets', {
      key,
      body: { name: 'Not stored', categoryId: 1 },
    });
    expectRateLimited(refusedCreate, LIMIT);
    const refusedSale = await t.request('PATCH', `/v1/pets/${created.json().id}`, {
      key,
      body: { status: 'sold' },
    });
    expectRateLimited(refusedSale, LIMIT);
    const pets = await t.dataSource.query('SELECT name, status FROM pets');
    expect(pets).toEqual([{ name: 'Rex', status: null }]);
  });

  it('gives each key its own budget', async () => {
    const keys = t.app.get(ApiKeyStore);
    const { key: first } = await keys.create('first');
    const { key: second } = await keys.create('second');
    for (let i = 0; i < LIMIT; i++) await t.request('GET', '/v1/pets', { key: first });
    expectRateLimited(await t.request('GET', '/v1/pets', { key: first }), LIMIT);
    const other = await t.request('GET', '/v1/pets', { key: second });
    expect(other.statusCode).toBe(200);
    expectBudget(other, LIMIT, LIMIT - 1);
  });

  it('does not count or limit requests refused for their key, and adds no budget headers to them', async () => {
    const { key } = await t.app.get(ApiKeyStore).create('after-401s');
    for (let i = 0; i < LIMIT + 2; i++) {
      const refused = await t.request('GET', '/v1/pets', { key: null });
      expect(refused.statusCode).toBe(401);
      expect(noBudgetHeaders(refused)).toEqual([]);
    }
    const first = await t.request('GET', '/v1/pets', { key });
    expectBudget(first, LIMIT, LIMIT - 1);
  });

  it.each(['/health/live', '/health/ready', '/docs', '/docs-json'])(
    'leaves %s unlimited and without budget headers',
    async (url) => {
      for (let i = 0; i < LIMIT + 2; i++) {
        const response = await t.request('GET', url, { key: null });
        expect(response.statusCode).toBe(200);
        expect(noBudgetHeaders(response)).toEqual([]);
      }
    },
  );
});

describe('RATE_LIMIT_PER_MINUTE=0', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());

  it('turns rate limiting off: no 429 and no budget headers', async () => {
    for (let i = 0; i < 20; i++) {
      const response = await t.request('GET', '/v1/pets');
      expect(response.statusCode).toBe(200);
      expect(noBudgetHeaders(response)).toEqual([]);
    }
  });
});

describe('with Redis unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Port 9 (discard) has nothing listening: every counter update fails at once.
    t = await startTestApp('sqlite', {
      RATE_LIMIT_PER_MINUTE: '1',
      REDIS_URL: 'redis://127.0.0.1:9',
    });
  });
  afterAll(() => t?.close());

  it('keeps serving (the limit is not enforced) rather than failing requests', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await t.request('GET', '/v1/pets');
      expect(response.statusCode).toBe(200);
      expect(noBudgetHeaders(response)).toEqual([]);
    }
  });
});

describe.skipIf(!REDIS_URL && !process.env.CI)('two instances on one Redis [redis]', () => {
  const LIMIT = 4;
  let first: TestApp;
  let second: NestFastifyApplication;
  beforeAll(async () => {
    if (!REDIS_URL) throw new Error('CI must set TEST_REDIS_URL: the shared budget is untested');
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_URL };
    first = await startTestApp('sqlite', env);
    second = await startSecondInstance(first, env);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  const getOn = (app: NestFastifyApplication) =>
    app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${first.key}` },
    });

  it('share one budget per key: requests on either count, and both refuse past it', async () => {
    const remaining: string[] = [];
    for (const app of [first.app, second, first.app, second]) {
      const response = await getOn(app);
      expect(response.statusCode).toBe(200);
      remaining.push(String(response.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    expectRateLimited(await getOn(first.app), LIMIT);
    expectRateLimited(await getOn(second), LIMIT);
  });
});
