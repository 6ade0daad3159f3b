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
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

const OUTCOMES = [
  { action: 'complete', status: 'completed', petStatus: 'sold' },
  { action: 'cancel', status: 'cancelled', petStatus: 'available' },
] as const;

const notOpen = (id: number, status: string) => ({
  code: 'ORDER_NOT_OPEN',
  message: `Order ${id} is ${status}: only an open order can be completed or cancelled`,
  status: 409,
});

describe.each(ENGINES)('completeOrder and cancelOrder [%s]', (engine) => {
  let t: TestApp;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestApp(engine, {}, { clock, ...WITHOUT_SWEEP });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    clock.setTo(NOW);
    await t.dataSource.query('DELETE FROM orders');
    await t.dataSource.query('DELETE FROM pets');
  });

  const close = (action: string, id: number | string, headers: Record<string, string> = {}) =>
    t.request('POST', `/v1/orders/${id}/${action}`, { headers });
  const held = async (holdSeconds = 60) => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 3, status: 'available' });
    return { pet, order: await placeOrder(t, { petId: pet.id, holdSeconds }) };
  };

  describe.each(OUTCOMES)('$action', ({ action, status, petStatus }) => {
    it(`makes an open order ${status} and its pet ${petStatus}: 200 with the Order and its ETag`, async () => {
      const { pet, order } = await held();
      const [last] = (await eventsAfter(t)).slice(-1);
      clock.setTo(at(59.999));

      const response = await close(action, order.id);

      expect(response.statusCode).toBe(200);
      const closed = { ...order, status, closedAt: at(59.999).toISOString() };
      expect(response.json()).toEqual(closed);
      expect(Object.keys(response.json())).toEqual([
        'id',
        'petId',
        'status',
        'createdAt',
        'expiresAt',
        'closedAt',
      ]);
      expect(response.headers.etag).toBe(`"${order.id}-2"`);
      expect(await storedOrder(t, order.id)).toMatchObject({ status, revision: 2 });
      expect(await storedPetState(t, pet.id)).toEqual({ status: petStatus, revision: 3 });
      expect((await eventsAfter(t, last.id)).map(({ type, data }) => ({ type, data }))).toEqual([
        { type: `order.${status}`, data: { order: closed } },
        {
          type: 'pet.updated',
          data: {
            pet: { id: pet.id, name: 'Rex', categoryId: 3, status: petStatus },
            previous: { status: 'pending' },
          },
        },
      ]);
    });

    it('refuses a closed order: 409 ORDER_NOT_OPEN naming its status, nothing changed', async () => {
      for (const other of OUTCOMES) {
        const { pet, order } = await held();
        expect((await close(other.action, order.id)).statusCode).toBe(200);
        const before = await storedPetState(t, pet.id);

        const response = await close(action, order.id);

        expect(response.statusCode).toBe(409);
        expect(response.json()).toEqual(notOpen(order.id, other.status));
        expect(await storedPetState(t, pet.id)).toEqual(before);
      }
    });

    it('at expiresAt expires the order first, then answers 409 naming expired', async () => {
      const { pet, order } = await held(60);
      const [last] = (await eventsAfter(t)).slice(-1);
      clock.setTo(at(60));

      const response = await close(action, order.id);

      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual(notOpen(order.id, 'expired'));
      const expired = { ...order, status: 'expired', closedAt: order.expiresAt };
      expect(await storedOrder(t, order.id)).toMatchObject({
        status: 'expired',
        closedAt: order.expiresAt,
        revision: 2,
      });
      expect(await storedPetState(t, pet.id)).toEqual({ status: 'available', revision: 3 });
      expect((await eventsAfter(t, last.id)).map(({ type, data }) => ({ type, data }))).toEqual([
        { type: 'order.expired', data: { order: expired } },
        {
          type: 'pet.updated',
          data: {
            pet: { id: pet.id, name: 'Rex', categoryId: 3, status: 'available' },
            previous: { status: 'pending' },
          },
        },
      ]);
    });

    it('with If-Match: closes only the order as read (412 otherwise, before 409)', async () => {
      const { order } = await held();
      const stale = await close(action, order.id, { 'if-match': `"${order.id}-2"` });
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toEqual({
        code: 'PRECONDITION_FAILED',
        message: `If-Match does not match the current ETag of order ${order.id}: read the order again, then retry`,
        status: 412,
      });
      expect((await storedOrder(t, order.id))!.status).toBe('open');

      const fresh = await close(action, order.id, { 'if-match': `"x", "${order.id}-1"` });
      expect(fresh.statusCode).toBe(200);
      expect((await close(action, order.id, { 'if-match': `"${order.id}-1"` })).statusCode).toBe(
        412,
      );
      expect((await close(action, order.id, { 'if-match': '*' })).statusCode).toBe(409);
    });

    it('answers 404 for an unknown order and 400 naming orderId for a malformed one', async () => {
      const unknown = await close(action, 4242);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({
        code: 'NOT_FOUND',
        message: 'No order with id 4242',
        status: 404,
      });
      for (const id of ['0', '01', '-1', '1.5', 'abc', String(MAX_ID + 1)]) {
        const malformed = await close(action, id);
        expect(malformed.statusCode).toBe(400);
        expect(malformed.json()).toEqual({
          code: 'VALIDATION_FAILED',
          message: `orderId must be a decimal integer from 1 to ${MAX_ID}`,
          status: 400,
        });
      }
    });

    it('answers 401, then 403 without orders:write, before 400 and 404', async () => {
      const { order } = await held();
      const reader = (await t.app.get(ApiKeyStore).create('shop', { scopes: ['pets:read'] })).key;
      expect((await t.request('POST', `/v1/orders/abc/${action}`, { key: null })).statusCode).toBe(
        401,
      );
      for (const id of ['abc', '4242', String(order.id)]) {
        const forbidden = await t.request('POST', `/v1/orders/${id}/${action}`, { key: reader });
        expect(forbidden.statusCode).toBe(403);
      }
      expect((await storedOrder(t, order.id))!.status).toBe('open');
    });
  });
});
