import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LightMyRequestResponse as Response } from 'fastify';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { apiClient } from '../support/http-client.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { startSecondInstance, startTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const LIMIT = 3;
const MADE_UP_KEY = `Bearer pets_0123456789ab_${'A'.repeat(43)}`;

/** A client address no other test (or earlier run sharing Redis) counts against. */
const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

const send = (
  app: NestFastifyApplication,
  remoteAddress: string,
  authorization?: string,
  headers: Record<string, string> = {},
) =>
  app.inject({
    method: 'GET',
    url: '/v1/pets',
    remoteAddress,
    headers: { ...(authorization !== undefined && { authorization }), ...headers },
  });

const expectLimited = (response: Response) => {
  expect(response.statusCode).toBe(429);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.json()).toEqual({
    code: 'RATE_LIMITED',
    message: `Too many failed authentications from this address (limit ${LIMIT} per minute); retry in ${retryAfter} s`,
    status: 429,
  });
};

describe.each(ENGINES)('failed-authentication limit per client address [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine, { AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT) });
  });
  afterAll(() => t?.close());

  /** Spends the address's whole budget of failures, each a 401. */
  const exhaust = async (address: string) => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await send(t.app, address, MADE_UP_KEY)).statusCode).toBe(401);
    }
  };

  it(`answers 429 with Retry-After after ${LIMIT} failures, whether the key is made up or missing`, async () => {
    const address = freshAddress();
    await exhaust(address);
    expectLimited(await send(t.app, address, MADE_UP_KEY));
    expectLimited(await send(t.app, address));
    expectLimited(await send(t.app, address, 'Basic dXNlcjpwYXNz'));
  });

  it('refuses before any key lookup: a valid key this instance has not verified is refused too', async () => {
    const address = freshAddress();
    const { key } = await t.app.get(ApiKeyStore).create('new-on-this-instance');
    await exhaust(address);
    expectLimited(await send(t.app, address, `Bearer ${key}`));
  });

  it('counts missing keys as failures', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) expect((await send(t.app, address)).statusCode).toBe(401);
    expectLimited(await send(t.app, address, MADE_UP_KEY));
  });

  it('lets a key this instance verified lately through from a blocked address, and the other addresses', async () => {
    const address = freshAddress();
    const { key } = await t.app.get(ApiKeyStore).create('working-client');
    expect((await send(t.app, freshAddress(), `Bearer ${key}`)).statusCode).toBe(200);
    await exhaust(address);
    expectLimited(await send(t.app, address, MADE_UP_KEY));

    const working = await send(t.app, address, `Bearer ${key}`);
    expect(working.statusCode).toBe(200);
    expect(working.json()).toEqual(expect.any(Array));
    expect((await send(t.app, freshAddress(), MADE_UP_KEY)).statusCode).toBe(401);
  });

  it('still applies revocation to a key that passes the blocked address', async () => {
    const address = freshAddress();
    const keys = t.app.get(ApiKeyStore);
    const { key, summary } = await keys.create('revoked-while-blocked');
    expect((await send(t.app, address, `Bearer ${key}`)).statusCode).toBe(200);
    await exhaust(address);
    expect((await send(t.app, address, `Bearer ${key}`)).statusCode).toBe(200);

    const revoked = await runApiKeyCli(['revoke', String(summary.id)], t.databaseUrl);
    expect(revoked.code).toBe(0);
    const revokedAt = Date.now();
    let response = await send(t.app, address, `Bearer ${key}`);
    while (response.statusCode === 200 && Date.now() - revokedAt < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await send(t.app, address, `Bearer ${key}`);
    }
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Invalid API key',
      status: 401,
    });
    // No longer a verified key: the blocked address's rule applies to it like to any other.
    expectLimited(await send(t.app, address, `Bearer ${key}`));
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy: varying it does not escape', async () => {
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) {
      const spoofed = { 'x-forwarded-for': freshAddress() };
      expect((await send(t.app, address, MADE_UP_KEY, spoofed)).statusCode).toBe(401);
    }
    expectLimited(await send(t.app, address, MADE_UP_KEY, { 'x-forwarded-for': freshAddress() }));
  });

  it('leaves /docs and /health unlimited for a blocked address', async () => {
    const address = freshAddress();
    await exhaust(address);
    for (const url of ['/health/live', '/docs-json']) {
      expect((await t.app.inject({ method: 'GET', url, remoteAddress: address })).statusCode).toBe(
        200,
      );
    }
  });
});

describe('behind a trusted proxy (TRUSTED_PROXIES)', () => {
  let t: TestApp;
  const proxy = '192.0.2.10';
  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT),
      TRUSTED_PROXIES: `${proxy},192.0.2.64/26`,
    });
  });
  afterAll(() => t?.close());

  const viaProxy = (forwardedFor: string) =>
    send(t.app, proxy, MADE_UP_KEY, { 'x-forwarded-for': forwardedFor });

  it('counts per client the proxy names, not per proxy', async () => {
    const [client, neighbour] = [freshAddress(), freshAddress()];
    for (let i = 0; i < LIMIT; i++) expect((await viaProxy(client)).statusCode).toBe(401);
    expectLimited(await viaProxy(client));
    expect((await viaProxy(neighbour)).statusCode).toBe(401);
  });

  it('takes the right-most untrusted address: entries the client wrote to the left do not escape', async () => {
    const client = freshAddress();
    for (let i = 0; i < LIMIT; i++) {
      expect((await viaProxy(`${freshAddress()}, ${client}, 192.0.2.70`)).statusCode).toBe(401);
    }
    expectLimited(await viaProxy(`${freshAddress()}, ${client}`));
  });
});

describe('AUTH_FAILURE_LIMIT_PER_MINUTE=0', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { AUTH_FAILURE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());

  it('turns the limit off: every failure is a 401', async () => {
    const address = freshAddress();
    for (let i = 0; i < 100; i++) {
      expect((await send(t.app, address, MADE_UP_KEY)).statusCode).toBe(401);
    }
  });
});

describe.each(ENGINES)('a flood of made-up keys over real sockets [%s]', (engine) => {
  let database: TestDatabase;
  let server: ServerProcess;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    server = await startServer({ NODE_ENV: 'production', DATABASE_URL: database.url });
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await database?.drop();
  });

  it('gets 401 for the first 60 (the default limit), then 429, spoofed X-Forwarded-For or not', async () => {
    const client = apiClient(server.baseUrl, null, 4);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 70; i++) {
        const outcome = await client.get('/v1/pets');
        statuses.push(outcome.status!);
      }
      expect(statuses.slice(0, 60)).toEqual(Array(60).fill(401));
      expect(statuses.slice(60)).toEqual(Array(10).fill(429));
      const key = (await runApiKeyCli(['create', 'after-flood'], database.url)).stdout.trim();
      const spoofing = await fetch(`${server.baseUrl}/v1/pets`, {
        headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': '198.51.100.99' },
      });
      expect(spoofing.status).toBe(429);
      expect(await spoofing.json()).toMatchObject({ code: 'RATE_LIMITED' });
    } finally {
      client.close();
    }
  });
});

describe.skipIf(!REDIS_URL && !process.env.CI)(
  'two instances on one Redis share the failure count [redis]',
  () => {
    let first: TestApp;
    let second: NestFastifyApplication;
    beforeAll(async () => {
      if (!REDIS_URL) throw new Error('CI must set TEST_REDIS_URL: the shared count is untested');
      const env = { AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_URL };
      first = await startTestApp('sqlite', env);
      second = await startSecondInstance(first, env);
    });
    afterAll(async () => {
      await second?.close();
      await first?.close();
    });

    it('failures on either count, and both refuse the address past the limit', async () => {
      const address = freshAddress();
      expect((await send(first.app, address, MADE_UP_KEY)).statusCode).toBe(401);
      expect((await send(second, address, MADE_UP_KEY)).statusCode).toBe(401);
      expect((await send(first.app, address, MADE_UP_KEY)).statusCode).toBe(401);
      expectLimited(await send(second, address, MADE_UP_KEY));
      expectLimited(await send(first.app, address, MADE_UP_KEY));
      expect((await send(second, freshAddress(), MADE_UP_KEY)).statusCode).toBe(401);
    });

    it('an instance refuses an address that failed only on the other one', async () => {
      const address = freshAddress();
      for (let i = 0; i < LIMIT; i++) {
        expect((await send(first.app, address, MADE_UP_KEY)).statusCode).toBe(401);
      }
      expectLimited(await send(second, address, MADE_UP_KEY));
    });
  },
);
