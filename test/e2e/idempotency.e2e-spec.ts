import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { IdempotencyKeySweep } from '../../src/pets/idempotency-key-sweep.js';
import { startSecondInstance, startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

const REX = { name: 'Rex', categoryId: 1, status: 'available' };

describe.each(ENGINES)('Idempotency-Key on createPet [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM idempotency_keys');
    await t.dataSource.query('DELETE FROM pets');
  });

  const create = (body: unknown, key?: string, apiKey = t.key) =>
    t.request('POST', '/v1/pets', {
      body,
      key: apiKey,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  const petCount = async () =>
    Number((await t.dataSource.query('SELECT count(*) AS n FROM pets'))[0].n);
  const storedClaims = () =>
    t.dataSource.query<Record<string, unknown>[]>(
      'SELECT api_key_id, key, request_hash, pet_id, expires_at FROM idempotency_keys',
    );

  it('stores the claim in idempotency_keys beside the pet, expiring in 24 hours', async () => {
    const key = randomUUID();
    const before = Date.now();
    const pet = (await create(REX, key)).json();
    const keyOwner = (await t.app.get(ApiKeyStore).list()).find((k) => k.name === 'e2e')!;

    const [claim, ...others] = await storedClaims();
    expect(others).toEqual([]);
    expect({ ...claim, pet_id: Number(claim.pet_id), expires_at: undefined }).toEqual({
      api_key_id: keyOwner.id,
      key,
      request_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      pet_id: pet.id,
      expires_at: undefined,
    });
    const expiresAt = new Date(claim.expires_at as string | Date).getTime();
    expect(expiresAt - before).toBeGreaterThanOrEqual(24 * 60 * 60 * 1000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(24 * 60 * 60 * 1000);
  });

  it('sweeps expired claims and keeps live ones and every pet', async () => {
    const [expired, live] = [randomUUID(), randomUUID()];
    await create(REX, expired);
    await create({ ...REX, name: 'Max' }, live);
    await t.dataSource.query(
      `UPDATE idempotency_keys SET expires_at = '2000-01-01T00:00:00.000Z' WHERE key = '${expired}'`,
    );

    await t.app.get(IdempotencyKeySweep).forgetExpiredKeys();

    expect((await storedClaims()).map((claim) => claim.key)).toEqual([live]);
    expect(await petCount()).toBe(2);
  });

  it('answers a retry with the first response and creates nothing more', async () => {
    const key = randomUUID();
    const first = await create(REX, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const pet = first.json();
    expect(pet).toEqual({ id: expect.any(Number), ...REX });

    for (const retry of [REX, { status: 'available', categoryId: 1, name: 'Rex' }]) {
      const again = await create(retry, key);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(again.json()).toEqual(pet);
    }
    expect(await petCount()).toBe(1);
  });

  it('treats the same JSON spelled differently as the same request', async () => {
    const key = randomUUID();
    const first = await create('{"name":"Rex","categoryId":1}', key);
    const again = await create('{ "categoryId" : 1 ,\n "name" : "Rex" }', key);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(await petCount()).toBe(1);
  });

  it('refuses the same key with a different body: 422, nothing stored', async () => {
    const key = randomUUID();
    expect((await create(REX, key)).statusCode).toBe(201);
    for (const other of [
      { ...REX, name: 'Max' },
      { ...REX, categoryId: 2 },
      { name: 'Rex', categoryId: 1 },
    ]) {
      const refused = await create(other, key);
      expect(refused.statusCode).toBe(422);
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(refused.json()).toEqual({
        code: 'IDEMPOTENCY_KEY_REUSED',
        message: 'This Idempotency-Key was already used with a different request body',
        status: 422,
      });
    }
    expect(await petCount()).toBe(1);
  });

  it('scopes keys to the API key: another key owner gets a pet of their own', async () => {
    const { key: otherApiKey } = await t.app.get(ApiKeyStore).create('other-client');
    const key = randomUUID();
    const mine = await create(REX, key);
    const theirs = await create({ ...REX, name: 'Max' }, key, otherApiKey);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);
    expect(await petCount()).toBe(2);
  });

  it('creates a pet per request without the header, as before', async () => {
    await create(REX);
    await create(REX);
    expect(await petCount()).toBe(2);
  });

  it('does not remember a key whose request was refused', async () => {
    const key = randomUUID();
    expect((await create({ name: '', categoryId: 1 }, key)).statusCode).toBe(400);
    const accepted = await create(REX, key);
    expect(accepted.statusCode).toBe(201);
    expect(accepted.headers['idempotent-replayed']).toBeUndefined();
  });

  it('forgets a key after 24 hours: the next request with it creates a new pet', async () => {
    const key = randomUUID();
    const first = (await create(REX, key)).json();
    await t.dataSource.query("UPDATE idempotency_keys SET expires_at = '2000-01-01T00:00:00.000Z'");
    const later = await create({ ...REX, name: 'Max' }, key);
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json()).toEqual({ id: expect.any(Number), ...REX, name: 'Max' });
    expect(later.json().id).not.toBe(first.id);
    expect(await petCount()).toBe(2);
    // The first pet stays; only its claim on the key was released.
    expect((await t.request('GET', `/v1/pets/${first.id}`)).json()).toEqual(first);
  });

  it.each([
    ['empty', ''],
    ['over 255 characters', 'k'.repeat(256)],
    ['a control character', 'a\tb'],
    ['non-ASCII', 'clé'],
  ])('refuses a key that is %s: 400, nothing stored', async (_case, key) => {
    const refused = await create(REX, key);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
      status: 400,
    });
    expect(await petCount()).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const key = ' ~'.repeat(127) + 'x';
    expect((await create(REX, key)).statusCode).toBe(201);
    expect((await create(REX, key)).headers['idempotent-replayed']).toBe('true');
  });

  it('creates exactly one pet from 20 concurrent duplicates, and all get that pet', async () => {
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(REX, key)));
    const ids = new Set(responses.map((response) => response.json().id));
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(201));
    expect(ids.size).toBe(1);
    expect(await petCount()).toBe(1);
  });
});

describe.runIf(ENGINES.includes('postgres'))('Idempotency-Key across replicas [postgres]', () => {
  let t: TestApp;
  let replica: NestFastifyApplication;
  beforeAll(async () => {
    t = await startTestApp('postgres', { RATE_LIMIT_PER_MINUTE: '0' });
    replica = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(async () => {
    await replica?.close();
    await t?.close();
  });

  it('creates one pet when duplicates race on two instances', async () => {
    const key = randomUUID();
    const send = (app: typeof replica) =>
      app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        payload: JSON.stringify(REX),
      });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i % 2 ? replica : t.app)),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((response) => response.json().id)).size).toBe(1);
    const [{ n }] = await t.dataSource.query('SELECT count(*)::int AS n FROM pets');
    expect(n).toBe(1);
  });
});
