import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { loadConfig } from '../../src/config/app-config.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';

describe.skipIf(!ENGINES.includes('postgres'))('replicas on one database [postgres]', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(() => database?.drop());

  it('start together, migrate once, and serve the same pets with unique ids', async () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.url,
    });
    const replicas = await Promise.all([createApp(config), createApp(config), createApp(config)]);
    try {
      const { key } = await replicas[0].get(ApiKeyStore).create('replicas');
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

      const created = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          replicas[i % 3].inject({
            method: 'POST',
            url: '/v1/pets',
            headers,
            payload: JSON.stringify({ name: `p${i}`, categoryId: 1 }),
          }),
        ),
      );
      const ids = created.map((response) => response.json().id);
      expect(new Set(ids).size).toBe(30);

      for (const replica of replicas) {
        const listed = await replica.inject({ method: 'GET', url: '/v1/pets?limit=100', headers });
        expect(listed.json().map((pet: { id: number }) => pet.id)).toEqual(
          [...ids].sort((a, b) => a - b),
        );
      }
      // Each migration ran exactly once, although every replica ran them at start.
      const applied = await replicas[0]
        .get(DataSource)
        .query('SELECT name FROM migrations ORDER BY id');
      expect(applied).toEqual([
        { name: 'InitialSchema1795219200000' },
        { name: 'IdempotencyKeys1795298400000' },
        { name: 'IdempotencyKeysTable1795400000000' },
        { name: 'ApiKeyScopesExpiry1795500000000' },
        { name: 'ApiKeyDeprecatedCalls1795600000000' },
        { name: 'PetRevision1795700000000' },
        { name: 'PetEvents1795800000000' },
        { name: 'LeanPetEvents1795900000000' },
        { name: 'Webhooks1796000000000' },
        { name: 'IdempotencyResponses1796100000000' },
        { name: 'Categories1796200000000' },
        { name: 'PetsByCategory1796300000000' },
        { name: 'PetHolds1796400000000' },
        { name: 'PetCounts1796500000000' },
        { name: 'ClaimsOutlivePets1796600000000' },
        { name: 'Orders1797000000000' },
        { name: 'DropPetHolds1797100000000' },
      ]);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });
});

describe.skipIf(!ENGINES.includes('postgres'))('database outage [postgres]', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(() => database?.drop());

  it('answers 503 SERVICE_UNAVAILABLE quickly while the database is gone, and recovers when it is back', async () => {
    const direct = new URL(database.url);
    const proxy = new TcpProxy(Number(direct.port || 5432));
    const proxyPort = await proxy.start();
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxyPort);
    const app = await createApp(
      loadConfig({
        NODE_ENV: 'production',
        LOG_LEVEL: 'silent',
        DATABASE_URL: viaProxy.toString(),
      }),
    );
    try {
      const { key } = await app.get(ApiKeyStore).create('outage');
      const headers = { authorization: `Bearer ${key}` };
      expect((await app.inject({ method: 'GET', url: '/v1/pets', headers })).statusCode).toBe(200);

      await proxy.cut();
      const startedAt = Date.now();
      const during = await app.inject({ method: 'GET', url: '/v1/pets', headers });
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      expect(during.statusCode).toBe(503);
      expect(during.headers['retry-after']).toBe('1');
      expect(during.json()).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'The database is unavailable; retry later',
        status: 503,
      });
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);

      await proxy.start(proxyPort);
      const after = await app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{"name":"back","categoryId":1}',
      });
      expect(after.statusCode).toBe(201);
    } finally {
      await app.close();
      await proxy.cut();
    }
  });
});
