import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { clearEvents, feedEvents, statusCounts } from '../../support/catalogue-api.js';
import { eventsAfter, placeOrder, storedOrder, WITHOUT_SWEEP } from '../../support/orders-api.js';
import { createPet, storedPets } from '../../support/pets-api.js';
import { startTestApp, type TestApp, TestClock } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const error = (status: number, code: string, message: string) => ({ code, message, status });
const NOW = new Date('2026-11-29T10:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

describe.each(ENGINES)('DELETE /v1/pets/{petId} (deletePet) [%s]', (engine) => {
  let t: TestApp;
  let readOnlyKey: string;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, { clock, ...WITHOUT_SWEEP });
    ({ key: readOnlyKey } = await t.app
      .get(ApiKeyStore)
      .create('storefront', { scopes: ['pets:read'] }));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    clock.setTo(NOW);
    await t.dataSource.query('DELETE FROM pets');
    await t.dataSource.query('DELETE FROM orders');
    await clearEvents(t);
  });

  const remove = (id: number | string, headers: Record<string, string> = {}, key?: string | null) =>
    t.request('DELETE', `/v1/pets/${id}`, { headers, key });

  it('answers 204 without a body; afterwards the pet is 404 everywhere and gone from the list', async () => {
    const kept = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const pet = await createPet(t, { name: 'Typo', categoryId: 1, status: 'available' });

    const deleted = await remove(pet.id);

    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect(deleted.headers['content-type']).toBeUndefined();
    expect(deleted.headers['cache-control']).toBe('no-store');
    const gone = error(404, 'NOT_FOUND', `No pet with id ${pet.id}`);
    expect((await t.request('GET', `/v1/pets/${pet.id}`)).json()).toEqual(gone);
    const patched = await t.request('PATCH', `/v1/pets/${pet.id}`, { body: { name: 'X' } });
    expect(patched.statusCode).toBe(404);
    expect(patched.json()).toEqual(gone);
    expect((await remove(pet.id)).json()).toEqual(gone);
    for (const query of [
      '',
      '?status=available',
      '?categoryId=1',
      '?categoryId=1&status=available',
    ])
      expect((await t.request('GET', `/v1/pets${query}`)).json()).toEqual([kept]);
    expect((await storedPets(t)).map(({ id }) => Number(id))).toEqual([kept.id]);
  });

  it('writes one pet.deleted event with the pet as it was, in the same transaction', async () => {
    const pet = await createPet(t, { name: 'Typo', categoryId: 4, status: 'pending' });
    await remove(pet.id);
    await remove(pet.id);

    const events = await feedEvents(t, 2);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'pet.created', data: { pet } },
      { type: 'pet.deleted', data: { pet } },
    ]);
  });

  it('deletes a pet created with an Idempotency-Key; a retry of that create still gets its first answer', async () => {
    const headers = { 'idempotency-key': 'order-1' };
    const body = { name: 'Bella', categoryId: 2 };
    const first = await t.request('POST', '/v1/pets', { body, headers });

    expect((await remove(first.json().id)).statusCode).toBe(204);

    const retry = await t.request('POST', '/v1/pets', { body, headers });
    expect(retry.statusCode).toBe(201);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await storedPets(t)).toEqual([]);
  });

  it('never gives a deleted id again, not even the highest one', async () => {
    await createPet(t, { name: 'a', categoryId: 1 });
    const last = await createPet(t, { name: 'b', categoryId: 1 });
    await remove(last.id);

    const next = await createPet(t, { name: 'c', categoryId: 1 });

    expect(next.id).toBeGreaterThan(last.id);
    expect((await t.request('GET', `/v1/pets/${last.id}`)).statusCode).toBe(404);
  });

  it('If-Match: the current tag deletes, a stale or weak one is 412 and deletes nothing', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1 });
    await t.request('PATCH', `/v1/pets/${pet.id}`, { body: { name: 'Max' } });

    for (const tag of [`"${pet.id}-1"`, `W/"${pet.id}-2"`]) {
      const stale = await remove(pet.id, { 'if-match': tag });
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toEqual(
        error(
          412,
          'PRECONDITION_FAILED',
          `If-Match does not match the current ETag of pet ${pet.id}: read the pet again, then retry`,
        ),
      );
    }
    expect(await storedPets(t)).toHaveLength(1);
    expect((await remove(pet.id, { 'if-match': `"0-1", "${pet.id}-2"` })).statusCode).toBe(204);
  });

  it('a pet an open order holds is 409 PET_HELD and stays, held', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const order = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });
    clock.setTo(at(59.999));

    const refused = await remove(pet.id, { 'if-match': '*' });

    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual(
      error(
        409,
        'PET_HELD',
        `Pet ${pet.id} is held by an open order: complete or cancel the order first`,
      ),
    );
    expect((await t.request('GET', `/v1/pets/${pet.id}`)).json()).toEqual({
      ...pet,
      status: 'pending',
    });
    expect(await storedOrder(t, order.id)).toMatchObject({ status: 'open', revision: 1 });
  });

  it('a pet whose order lapsed is deleted: the order expires first, in its own transaction', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const order = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });
    const [last] = (await eventsAfter(t)).slice(-1);
    clock.setTo(at(60));

    const deleted = await remove(pet.id);

    expect(deleted.statusCode).toBe(204);
    expect(await storedPets(t)).toEqual([]);
    expect(await storedOrder(t, order.id)).toMatchObject({
      status: 'expired',
      closedAt: order.expiresAt,
      revision: 2,
    });
    const events = await eventsAfter(t, last.id);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'order.expired',
        data: { order: { ...order, status: 'expired', closedAt: order.expiresAt } },
      },
      {
        type: 'pet.updated',
        data: { pet: { ...pet, status: 'available' }, previous: { status: 'pending' } },
      },
      { type: 'pet.deleted', data: { pet: { ...pet, status: 'available' } } },
    ]);
  });

  it('answers in the order 401, 403, 400, 404, 412, 409, 204', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1 });
    const held = await createPet(t, { name: 'Held', categoryId: 1, status: 'available' });
    await placeOrder(t, { petId: held.id });
    const stale = { 'if-match': '"0-0"' };

    expect((await remove('x', stale, null)).statusCode).toBe(401);
    expect((await remove('x', stale, readOnlyKey)).statusCode).toBe(403);
    expect((await remove('x', stale)).statusCode).toBe(400);
    expect((await remove(pet.id, { 'if-match': 'not a tag' })).statusCode).toBe(400);
    expect((await remove(held.id + 100, stale)).statusCode).toBe(404);
    expect((await remove(held.id, stale)).statusCode).toBe(412);
    expect((await remove(held.id, { 'if-match': `"${held.id}-2"` })).statusCode).toBe(409);
    expect((await remove(pet.id, { 'if-match': `"${pet.id}-1"` })).statusCode).toBe(204);
  });

  it.each(['0', '-1', '01', '1.5', 'abc', '9007199254740992'])(
    'a malformed petId %j is a 400 naming it',
    async (id) => {
      const response = await remove(id);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(
        error(
          400,
          'VALIDATION_FAILED',
          'petId must be a decimal integer from 1 to 9007199254740991',
        ),
      );
    },
  );

  it('of concurrent deletes and sales of one pet, one delete wins; the rest 404, or 200 before it', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2
          ? remove(pet.id)
          : t.request('PATCH', `/v1/pets/${pet.id}`, { body: { name: `Rex ${i}` } }),
      ),
    );
    const deletes = responses.filter((_, i) => i % 2);
    expect(statusCounts(deletes)).toEqual({ 204: 1, 404: 9 });
    expect(await storedPets(t)).toEqual([]);
    const events = await feedEvents(t, 2);
    expect(events.at(-1)!.type).toBe('pet.deleted');
    expect(events.filter(({ type }) => type === 'pet.deleted')).toHaveLength(1);
  });
});
