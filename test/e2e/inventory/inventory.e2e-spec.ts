import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InventoryFold } from '../../../src/inventory/inventory-fold.js';
import { placeOrder } from '../../support/orders-api.js';
import { createPet, MAX_ID, nextPage, type Pet } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const STATUSES = [undefined, 'available', 'pending', 'sold'] as const;

type Inventory = Record<'available' | 'pending' | 'sold' | 'unspecified' | 'total', number>;

/** The inventory as listing every pet (of one category) gives it: the definition of exact. */
function countedFrom(pets: Pet[]): Inventory {
  const count = (status?: string) => pets.filter((pet) => pet.status === status).length;
  return {
    available: count('available'),
    pending: count('pending'),
    sold: count('sold'),
    unspecified: count(undefined),
    total: pets.length,
  };
}

describe.each(ENGINES)('GET /v1/inventory (getInventory) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const inventory = async (query = '') => {
    const response = await t.request('GET', `/v1/inventory${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Inventory>();
  };

  /** Every pet, following listPets' next links. */
  async function listEvery(query = ''): Promise<Pet[]> {
    const pets: Pet[] = [];
    let url = `/v1/pets?limit=100${query}`;
    for (;;) {
      const page = await t.request('GET', url);
      pets.push(...page.json<Pet[]>());
      if (!page.headers.link) return pets;
      url = nextPage(String(page.headers.link));
    }
  }

  const patch = (app: NestFastifyApplication, id: number, body: object) =>
    app.inject({
      method: 'PATCH',
      url: `/v1/pets/${id}`,
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const remove = (app: NestFastifyApplication, id: number) =>
    app.inject({
      method: 'DELETE',
      url: `/v1/pets/${id}`,
      headers: { authorization: `Bearer ${t.key}` },
    });
  const create = (app: NestFastifyApplication, pet: object) =>
    app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(pet),
    });

  /** Creates, changes of status and category, and deletes, all at once, over `apps`. */
  async function mixedLoad(apps: NestFastifyApplication[], rounds: number): Promise<void> {
    const pets: Pet[] = [];
    for (let i = 0; i < 12; i++)
      pets.push(await createPet(t, { name: `p${i}`, categoryId: (i % 3) + 1 }));
    const work = Array.from({ length: rounds }, (_, i) => {
      const app = apps[i % apps.length];
      const pet = pets[i % pets.length];
      switch (i % 4) {
        case 0: {
          const status = STATUSES[(i / 4) % 4];
          return create(app, { name: `n${i}`, categoryId: (i % 5) + 1, ...(status && { status }) });
        }
        case 1:
          return patch(app, pet.id, { status: STATUSES[1 + (i % 3)] });
        case 2:
          return patch(app, pet.id, { categoryId: (i % 4) + 1 });
        default:
          return remove(app, pet.id);
      }
    });
    const statuses = (await Promise.all(work)).map(({ statusCode }) => statusCode);
    expect(statuses.every((status) => [200, 201, 204, 404, 409].includes(status))).toBe(true);
  }

  it('counts nothing in an empty store', async () => {
    expect(await inventory()).toEqual({
      available: 0,
      pending: 0,
      sold: 0,
      unspecified: 0,
      total: 0,
    });
  });

  it('counts by status, in the store and per category, as listing gives, before and after a fold', async () => {
    const pets: Pet[] = [];
    for (let i = 0; i < 20; i++) {
      const status = STATUSES[i % 4];
      pets.push(
        await createPet(t, { name: `p${i}`, categoryId: (i % 2) + 1, ...(status && { status }) }),
      );
    }
    await patch(t.app, pets[0].id, { status: 'sold' });
    await patch(t.app, pets[1].id, { categoryId: 2 });
    await remove(t.app, pets[2].id);

    const every = await listEvery();
    expect(await inventory()).toEqual(countedFrom(every));
    expect(await inventory('?categoryId=2')).toEqual(countedFrom(await listEvery('&categoryId=2')));

    await t.app.get(InventoryFold).fold();
    expect(await t.dataSource.query('SELECT * FROM pet_count_changes')).toEqual([]);
    expect(await inventory()).toEqual(countedFrom(every));
    expect(await inventory('?categoryId=1')).toEqual(countedFrom(await listEvery('&categoryId=1')));
    expect(await inventory(`?categoryId=${MAX_ID}`)).toEqual(countedFrom([]));
  });

  it('counts the pets orders hold, sell and release, as listing gives', async () => {
    const [sold, released] = await Promise.all(
      ['p0', 'p1'].map((name) => createPet(t, { name, categoryId: 2, status: 'available' })),
    );
    const first = await placeOrder(t, { petId: sold.id });
    const second = await placeOrder(t, { petId: released.id });
    expect(await inventory('?categoryId=2')).toEqual({ ...countedFrom([]), pending: 2, total: 2 });

    expect((await t.request('POST', `/v1/orders/${first.id}/complete`)).statusCode).toBe(200);
    expect((await t.request('POST', `/v1/orders/${second.id}/cancel`)).statusCode).toBe(200);
    const every = await listEvery('&categoryId=2');
    expect(countedFrom(every)).toEqual({ ...countedFrom([]), available: 1, sold: 1, total: 2 });
    expect(await inventory('?categoryId=2')).toEqual(countedFrom(every));
    expect(await inventory()).toEqual(countedFrom(await listEvery()));
  });

  it('is exact after a mixed concurrent load of creates, patches and deletes', async () => {
    await mixedLoad([t.app], 120);
    const every = await listEvery();
    expect(await inventory()).toEqual(countedFrom(every));
    for (const categoryId of [1, 2, 3, 4, 5])
      expect(await inventory(`?categoryId=${categoryId}`)).toEqual(
        countedFrom(every.filter((pet) => pet.categoryId === categoryId)),
      );
  });

  it.each([
    ['categoryId=0', 'categoryId must be a decimal integer from 1 to 9007199254740991'],
    ['categoryId=abc', 'categoryId must be a decimal integer from 1 to 9007199254740991'],
    ['categoryId=1&categoryId=2', 'categoryId must be given at most once'],
    ['status=sold', 'status is not a known field'],
  ])('?%s is a 400', async (query, message) => {
    const response = await t.request('GET', `/v1/inventory?${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
  });

  // Two app instances, each with its own pool and fold, on one PostgreSQL.
  describe.runIf(engine === 'postgres')('across two instances', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it('is exact after a mixed concurrent load split over both, whichever answers, folded or not', async () => {
      await mixedLoad([t.app, second], 200);
      const every = await listEvery();
      expect(await inventory()).toEqual(countedFrom(every));
      await Promise.all([t.app.get(InventoryFold).fold(), second.get(InventoryFold).fold()]);
      expect(await inventory()).toEqual(countedFrom(every));
      const fromSecond = await second.inject({
        method: 'GET',
        url: '/v1/inventory?categoryId=3',
        headers: { authorization: `Bearer ${t.key}` },
      });
      expect(fromSecond.json()).toEqual(countedFrom(every.filter((pet) => pet.categoryId === 3)));
    });
  });
});
