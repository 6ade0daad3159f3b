import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { createPet, MAX_ID } from '../../support/pets-api.js';
import {
  eventsAfter,
  placeOrder,
  storedOrder,
  storedPetState,
  WITHOUT_SWEEP,
} from '../../support/orders-api.js';
import { startTestApp, type TestApp, TestClock } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const NOW = new Date('2026-11-29T10:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

const validationFailed = (message: string) => ({ code: 'VALIDATION_FAILED', message, status: 400 });
const notAvailable = (id: number, what: string) => ({
  code: 'PET_NOT_AVAILABLE',
  message: `Pet ${id} ${what}: only an available pet can be ordered`,
  status: 409,
});

describe.each(ENGINES)('POST /v1/orders (createOrder) [%s]', (engine) => {
  let t: TestApp;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestApp(engine, { ORDER_HOLD_SECONDS: '600' }, { clock, ...WITHOUT_SWEEP });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    clock.setTo(NOW);
    await t.dataSource.query('DELETE FROM orders');
    await t.dataSource.query('DELETE FROM pets');
  });

  const order = (body: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', '/v1/orders', { body, headers });
  const available = () => createPet(t, { name: 'Rex', categoryId: 3, status: 'available' });

  it('holds an available pet: 201 with the open Order, its ETag, the pet pending', async () => {
    const pet = await available();

    const response = await order({ petId: pet.id, holdSeconds: 120 });

    expect(response.statusCode).toBe(201);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json<{ id: number }>();
    expect(Object.keys(body)).toEqual(['id', 'petId', 'status', 'createdAt', 'expiresAt']);
    expect(body).toEqual({
      id: body.id,
      petId: pet.id,
      status: 'open',
      createdAt: NOW.toISOString(),
      expiresAt: at(120),
    });
    expect(response.headers.etag).toBe(`"${body.id}-1"`);
    expect(await storedOrder(t, body.id)).toEqual({
      id: body.id,
      petId: pet.id,
      status: 'open',
      createdAt: NOW.toISOString(),
      expiresAt: at(120),
      closedAt: null,
      revision: 1,
    });
    expect(await storedPetState(t, pet.id)).toEqual({ status: 'pending', revision: 2 });
  });

  it('holds for ORDER_HOLD_SECONDS when holdSeconds is absent', async () => {
    const pet = await available();
    const placed = await placeOrder(t, { petId: pet.id });
    expect(placed.expiresAt).toBe(at(600));
  });

  it('takes holdSeconds from 60 to 86400', async () => {
    const [a, b] = [await available(), await available()];
    expect((await placeOrder(t, { petId: a.id, holdSeconds: 60 })).expiresAt).toBe(at(60));
    expect((await placeOrder(t, { petId: b.id, holdSeconds: 86400 })).expiresAt).toBe(at(86400));
  });

  it('commits order.created, then the pet’s pet.updated, next to each other', async () => {
    const pet = await available();
    const [created] = (await eventsAfter(t)).slice(-1);

    const placed = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });

    const events = await eventsAfter(t, created.id);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'order.created', data: { order: placed } },
      {
        type: 'pet.updated',
        data: {
          pet: { id: pet.id, name: 'Rex', categoryId: 3, status: 'pending' },
          previous: { status: 'available' },
        },
      },
    ]);
  });

  it.each([
    ['pending', 'is pending'],
    ['sold', 'is sold'],
    [undefined, 'has no status'],
  ])(
    'refuses a pet whose status is %s: 409 PET_NOT_AVAILABLE, nothing stored',
    async (status, what) => {
      const pet = await createPet(t, { name: 'Rex', categoryId: 3, ...(status && { status }) });

      const response = await order({ petId: pet.id });

      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(notAvailable(pet.id, what));
      expect(await t.dataSource.query('SELECT id FROM orders')).toEqual([]);
      expect((await storedPetState(t, pet.id)).revision).toBe(1);
    },
  );

  it('refuses a pet another open order holds, naming the hold', async () => {
    const pet = await available();
    await placeOrder(t, { petId: pet.id });

    const response = await order({ petId: pet.id });

    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual(notAvailable(pet.id, 'is pending, held by an open order'));
  });

  it('answers a petId that names no pet with 400 naming petId', async () => {
    const response = await order({ petId: 4242 });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(validationFailed('petId 4242 names no pet'));
  });

  it.each([
    [{}, 'petId is required'],
    [{ petId: '1' }, `petId must be a JSON integer from 1 to ${MAX_ID}`],
    [{ petId: 1.5 }, `petId must be a JSON integer from 1 to ${MAX_ID}`],
    [{ petId: 0 }, `petId must be a JSON integer from 1 to ${MAX_ID}`],
    [{ petId: MAX_ID + 1 }, `petId must be a JSON integer from 1 to ${MAX_ID}`],
    [{ petId: null }, `petId must be a JSON integer from 1 to ${MAX_ID}`],
    [
      { petId: 1, holdSeconds: 59 },
      'holdSeconds must be a JSON integer from 60 to 86400 (or absent)',
    ],
    [
      { petId: 1, holdSeconds: 86401 },
      'holdSeconds must be a JSON integer from 60 to 86400 (or absent)',
    ],
    [
      { petId: 1, holdSeconds: null },
      'holdSeconds must be a JSON integer from 60 to 86400 (or absent)',
    ],
    [
      { petId: 1, holdSeconds: '60' },
      'holdSeconds must be a JSON integer from 60 to 86400 (or absent)',
    ],
    [{ petId: 1, id: 3 }, 'id is not a known field'],
  ])('refuses %j with 400: %s', async (body, message) => {
    const response = await order(body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(validationFailed(message));
  });

  it('answers 401 before 403 before 400, and changes nothing', async () => {
    const pet = await available();
    const readOnly = (await t.app.get(ApiKeyStore).create('shop', { scopes: ['pets:read'] })).key;
    const petsOnly = (
      await t.app.get(ApiKeyStore).create('clerk', { scopes: ['pets:read', 'pets:write'] })
    ).key;

    const missing = await t.request('POST', '/v1/orders', { body: { petId: 'x' }, key: null });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
    for (const key of [readOnly, petsOnly]) {
      const forbidden = await t.request('POST', '/v1/orders', { body: { petId: 'x' }, key });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json()).toEqual({
        code: 'FORBIDDEN',
        message: 'This API key lacks the scope orders:write',
        status: 403,
      });
      expect(
        (await t.request('POST', '/v1/orders', { body: { petId: pet.id }, key })).statusCode,
      ).toBe(403);
    }
    expect(await storedPetState(t, pet.id)).toEqual({ status: 'available', revision: 1 });
  });
});
