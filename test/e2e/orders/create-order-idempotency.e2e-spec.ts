import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { createPet } from '../../support/pets-api.js';
import { WITHOUT_SWEEP } from '../../support/orders-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const DUPLICATES = 20;

describe.each(ENGINES)('Idempotency-Key on createOrder [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, WITHOUT_SWEEP);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM idempotency_keys');
    await t.dataSource.query('DELETE FROM orders');
    await t.dataSource.query('DELETE FROM pets');
  });

  const order = (body: object, key: string, app?: NestFastifyApplication, apiKey = t.key) =>
    (app ?? t.app).inject({
      method: 'POST',
      url: '/v1/orders',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      payload: JSON.stringify(body),
    });
  const orderCount = async () =>
    Number((await t.dataSource.query('SELECT count(*) AS n FROM orders'))[0].n);
  const available = () => createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
  const sameAnswer = (first: Response) => (response: Response) => {
    expect(response.statusCode).toBe(201);
    expect(response.body).toBe(first.body);
    expect(response.headers.etag).toBe(first.headers.etag);
    expect(response.headers['idempotent-replayed']).toBe('true');
  };

  it('places the order once: a retry gets the first 201 byte for byte, even once it closed', async () => {
    const pet = await available();
    const first = await order({ petId: pet.id, holdSeconds: 300 }, 'till-7-sale-1');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const { id } = first.json<{ id: number }>();
    expect((await t.request('POST', `/v1/orders/${id}/complete`)).statusCode).toBe(200);

    // Key order and spelling do not matter: the validated fields do.
    sameAnswer(first)(await order({ holdSeconds: 300, petId: pet.id }, 'till-7-sale-1'));
    expect(await orderCount()).toBe(1);
    const [claim] = await t.dataSource.query<Record<string, unknown>[]>(
      'SELECT pet_id, response_body, response_etag FROM idempotency_keys',
    );
    expect({ ...claim, pet_id: Number(claim.pet_id) }).toEqual({
      pet_id: pet.id,
      response_body: first.body,
      response_etag: `"${id}-1"`,
    });
  });

  it('refuses the same key with another request: 422, nothing placed', async () => {
    const [a, b] = [await available(), await available()];
    expect((await order({ petId: a.id }, 'k')).statusCode).toBe(201);
    for (const other of [{ petId: b.id }, { petId: a.id, holdSeconds: 900 }]) {
      const reused = await order(other, 'k');
      expect(reused.statusCode).toBe(422);
      expect(reused.json()).toEqual({
        code: 'IDEMPOTENCY_KEY_REUSED',
        message: 'This Idempotency-Key was already used with a different request body',
        status: 422,
      });
    }
    expect(await orderCount()).toBe(1);
  });

  it('shares the table with createPet, where a key used for a pet never matches an order', async () => {
    const pet = await available();
    const created = await t.request('POST', '/v1/pets', {
      body: { name: 'Bella', categoryId: pet.id },
      headers: { 'idempotency-key': 'shared' },
    });
    expect(created.statusCode).toBe(201);
    expect((await order({ petId: pet.id }, 'shared')).statusCode).toBe(422);
    expect(await orderCount()).toBe(0);
  });

  it('keeps keys per API key', async () => {
    const pet = await available();
    const other = (await t.app.get(ApiKeyStore).create('till-2')).key;
    expect((await order({ petId: pet.id }, 'k')).statusCode).toBe(201);
    const refused = await order({ petId: pet.id }, 'k', undefined, other);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('PET_NOT_AVAILABLE');
  });

  it('stores nothing for a refusal: a retry asks again', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'pending' });
    expect((await order({ petId: pet.id }, 'k')).statusCode).toBe(409);
    await t.request('PATCH', `/v1/pets/${pet.id}`, {
      body: { status: 'available' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((await order({ petId: pet.id }, 'k')).statusCode).toBe(201);
  });

  it(`${DUPLICATES} concurrent duplicates place one order and all get its 201`, async () => {
    const pet = await available();
    const responses = await Promise.all(
      Array.from({ length: DUPLICATES }, () => order({ petId: pet.id }, 'burst')),
    );
    const first = responses.find((r) => r.headers['idempotent-replayed'] === undefined)!;
    expect(first.statusCode).toBe(201);
    for (const response of responses.filter((r) => r !== first)) sameAnswer(first)(response);
    expect(await orderCount()).toBe(1);
  });

  describe.runIf(engine === 'postgres')('across two instances', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it(`${DUPLICATES} duplicates split over both place one order`, async () => {
      const pet = await available();
      const responses = await Promise.all(
        Array.from({ length: DUPLICATES }, (_, i) =>
          order({ petId: pet.id }, 'split', i % 2 ? second : t.app),
        ),
      );
      expect(responses.map((r) => r.statusCode)).toEqual(Array(DUPLICATES).fill(201));
      expect(new Set(responses.map((r) => r.body)).size).toBe(1);
      expect(await orderCount()).toBe(1);
    });
  });
});
