import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { createPet, MAX_ID, nextPage } from '../../support/pets-api.js';
import { type Order, placeOrder, WITHOUT_SWEEP } from '../../support/orders-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

describe.each(ENGINES)('getOrder and listOrders [%s]', (engine) => {
  let t: TestApp;
  /** Orders of three pets: 0 completed, 1 cancelled, 2 open, then 3 open again on pet 1. */
  let orders: Order[];

  beforeAll(async () => {
    t = await startTestApp(engine, {}, WITHOUT_SWEEP);
    const pets = await Promise.all(
      [1, 2, 3].map((i) => createPet(t, { name: `Pet ${i}`, categoryId: 1, status: 'available' })),
    );
    orders = [];
    for (const pet of pets) orders.push(await placeOrder(t, { petId: pet.id }));
    const closed = async (id: number, action: string) =>
      (await t.request('POST', `/v1/orders/${id}/${action}`)).json<Order>();
    orders[0] = await closed(orders[0].id, 'complete');
    orders[1] = await closed(orders[1].id, 'cancel');
    orders.push(await placeOrder(t, { petId: pets[1].id }));
  });
  afterAll(() => t?.close());

  const list = (query = '') => t.request('GET', `/v1/orders${query}`);

  describe('getOrder', () => {
    it('answers 200 with the Order and its strong ETag; 304 on If-None-Match', async () => {
      for (const order of orders) {
        const response = await t.request('GET', `/v1/orders/${order.id}`);
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual(order);
        const etag = `"${order.id}-${order.status === 'open' ? 1 : 2}"`;
        expect(response.headers.etag).toBe(etag);
        expect(response.headers['cache-control']).toBe('private, no-cache');
        const again = await t.request('GET', `/v1/orders/${order.id}`, {
          headers: { 'if-none-match': etag },
        });
        expect(again.statusCode).toBe(304);
      }
    });

    it('answers 404 for an unknown order, 400 naming orderId for a malformed one', async () => {
      expect((await t.request('GET', '/v1/orders/999999')).json()).toEqual({
        code: 'NOT_FOUND',
        message: 'No order with id 999999',
        status: 404,
      });
      const malformed = await t.request('GET', '/v1/orders/x1');
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: `orderId must be a decimal integer from 1 to ${MAX_ID}`,
        status: 400,
      });
    });

    it('needs pets:read', async () => {
      const writer = (await t.app.get(ApiKeyStore).create('till', { scopes: ['orders:write'] }))
        .key;
      const response = await t.request('GET', `/v1/orders/${orders[0].id}`, { key: writer });
      expect(response.statusCode).toBe(403);
      expect(response.json().message).toBe('This API key lacks the scope pets:read');
    });
  });

  describe('listOrders', () => {
    it('lists every order in id order', async () => {
      const response = await list();
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(orders);
      expect(response.headers.link).toBeUndefined();
    });

    it('filters by status, by petId, and by both', async () => {
      expect((await list('?status=open')).json()).toEqual([orders[2], orders[3]]);
      expect((await list('?status=expired')).json()).toEqual([]);
      expect((await list(`?petId=${orders[1].petId}`)).json()).toEqual([orders[1], orders[3]]);
      expect((await list(`?petId=${orders[1].petId}&status=cancelled`)).json()).toEqual([
        orders[1],
      ]);
    });

    it('pages with limit and Link rel="next", keeping the filters', async () => {
      const seen: Order[] = [];
      let url: string | undefined = `/v1/orders?limit=1&status=open`;
      while (url) {
        const response = await t.request('GET', url);
        seen.push(...response.json<Order[]>());
        url = response.headers.link ? nextPage(response.headers.link as string) : undefined;
        if (url) expect(url).toMatch(/^\/v1\/orders\?limit=1&status=open&cursor=/);
      }
      expect(seen).toEqual([orders[2], orders[3]]);
    });

    it.each([
      ['?status=held', 'status must be one of open, completed, cancelled, expired'],
      ['?petId=0', `petId must be a decimal integer from 1 to ${MAX_ID}`],
      ['?petId=1&petId=2', 'petId must be given at most once'],
      ['?limit=101', 'limit must be a decimal integer from 1 to 100'],
      ['?cursor=abc', 'cursor must be a cursor taken from a Link rel="next" header'],
    ])('refuses %s with 400', async (query, message) => {
      const response = await list(query);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
    });
  });
});
