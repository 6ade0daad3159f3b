import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { IdempotencyKeySweep } from '../../src/idempotency/idempotency-key-sweep.js';
import { startSecondInstance, startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';
import type { LightMyRequestResponse as Response } from 'fastify';

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
  const storedResponses = () =>
    t.dataSource.query<Record<string, unknown>[]>(
      'SELECT key, response_body, response_etag FROM idempotency_keys ORDER BY key',
    );
  const eventCount = async () =>
    Number((await t.dataSource.query('SELECT count(*) AS n FROM pet_events'))[0].n);
  const patch = async (id: number, body: object) => {
    const response = await t.request('PATCH', `/v1/pets/${id}`, {
      body,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(response.statusCode).toBe(200);
    return response;
  };
  /** Every header in the order sent; of those that differ per request by design, the name only. */
  const headersOf = (response: Response) =>
    Object.entries(response.headers).map(([name, value]) =>
      name === 'x-request-id' || name === 'date' ? [name] : [name, value],
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

  it('replays the first response after the pet was renamed and sold, storing nothing', async () => {
    const key = randomUUID();
    const first = await create(REX, key);
    expect(first.statusCode).toBe(201);
    const { id } = first.json();
    expect(first.headers.etag).toBe(`"${id}-1"`);
    await patch(id, { name: 'Rexford', status: 'sold' });
    const [pets, events, claims] = [await petCount(), await eventCount(), await storedClaims()];

    const replay = await create(REX, key);

    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.body).toBe(`{"id":${id},"name":"Rex","categoryId":1,"status":"available"}`);
    // The first answer's headers, in its order, with the replay's mark before its ETag.
    const expected = headersOf(first);
    expected.splice(
      expected.findIndex(([name]) => name === 'etag'),
      0,
      ['idempotent-replayed', 'true'],
    );
    expect(headersOf(replay)).toEqual(expected);
    expect(Object.fromEntries(headersOf(first))).toMatchObject({
      etag: `"${id}-1"`,
      'content-type': 'application/json; charset=utf-8',
    });
    expect(replay.headers.location).toBeUndefined();
    expect(replay.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect([await petCount(), await eventCount(), await storedClaims()]).toEqual([
      pets,
      events,
      claims,
    ]);
    // The pet itself is as the PATCH left it: the replay answered from the claim alone.
    expect((await t.request('GET', `/v1/pets/${id}`)).json()).toEqual({
      id,
      name: 'Rexford',
      categoryId: 1,
      status: 'sold',
    });
  });

  it('replays the first response after two changes, byte for byte', async () => {
    const key = randomUUID();
    // Characters that JSON escapes: the stored text must be what was sent.
    const tricky = { name: 'Ünï "q" \\ 🐶 \u2028\t', categoryId: 9 };
    const first = await create(tricky, key);
    const { id } = first.json();
    await patch(id, { name: 'Second', status: 'pending' });
    const second = await patch(id, { name: 'Third', categoryId: 3, status: 'sold' });
    expect(second.headers.etag).toBe(`"${id}-3"`);

    for (const attempt of [1, 2]) {
      const replay = await create(tricky, key);
      expect({ attempt, status: replay.statusCode, body: replay.body }).toEqual({
        attempt,
        status: 201,
        body: first.body,
      });
      expect(replay.headers.etag).toBe(`"${id}-1"`);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    }
    expect(await petCount()).toBe(1);
  });

  it('stores the first response with the claim, in the create’s transaction', async () => {
    const [withStatus, withoutStatus] = [randomUUID(), randomUUID()].sort();
    const a = await create(REX, withStatus);
    const b = await create({ name: 'Tom', categoryId: 2 }, withoutStatus);
    expect(await storedResponses()).toEqual([
      { key: withStatus, response_body: a.body, response_etag: a.headers.etag },
      { key: withoutStatus, response_body: b.body, response_etag: b.headers.etag },
    ]);
    expect(b.body).toBe(`{"id":${b.json().id},"name":"Tom","categoryId":2}`);
  });

  it('answers a claim stored without its response with the pet as it is', async () => {
    // As the migration leaves a claim whose pet.created event retention had deleted.
    const key = randomUUID();
    const { id } = (await create(REX, key)).json();
    await t.dataSource.query(
      'UPDATE idempotency_keys SET response_body = NULL, response_etag = NULL',
    );
    await patch(id, { name: 'Rexford', status: 'sold' });

    const replay = await create(REX, key);

    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.etag).toBe(`"${id}-2"`);
    expect(replay.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(replay.body).toBe(`{"id":${id},"name":"Rexford","categoryId":1,"status":"sold"}`);
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
