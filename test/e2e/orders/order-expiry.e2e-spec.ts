import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet } from '../../support/pets-api.js';
import {
  eventsAfter,
  type Order,
  placeOrder,
  storedOrder,
  storedPetState,
  WITHOUT_SWEEP,
} from '../../support/orders-api.js';
import { startTestApp, type TestApp, TestClock } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';
import { waitFor } from '../../support/processes.js';

const NOW = new Date('2026-11-29T10:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

const typesAfter = async (t: TestApp, after: string) =>
  (await eventsAfter(t, after)).map(({ type }) => type);

describe.each(ENGINES)(
  'exact deadlines: the first write at expiresAt expires the hold [%s]',
  (engine) => {
    let t: TestApp;
    const clock = new TestClock();

    beforeAll(async () => {
      t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, { clock, ...WITHOUT_SWEEP });
    });
    afterAll(() => t?.close());
    beforeEach(async () => {
      clock.setTo(NOW);
      await t.dataSource.query('DELETE FROM orders');
      await t.dataSource.query('DELETE FROM pets');
    });

    const held = async () => {
      const pet = await createPet(t, { name: 'Rex', categoryId: 3, status: 'available' });
      const order = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });
      const [last] = (await eventsAfter(t)).slice(-1);
      return { pet, order, last };
    };
    const patch = (id: number, body: object) =>
      t.request('PATCH', `/v1/pets/${id}`, { body, headers: MERGE_PATCH });

    it('a new order of the pet at expiresAt: the lapsed order expires first, then the new one holds', async () => {
      const { pet, order, last } = await held();
      clock.setTo(at(60));

      const next = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });

      expect(next.expiresAt).toBe(at(120).toISOString());
      expect(await storedOrder(t, order.id)).toMatchObject({
        status: 'expired',
        closedAt: order.expiresAt,
      });
      expect(await typesAfter(t, last.id)).toEqual([
        'order.expired',
        'pet.updated',
        'order.created',
        'pet.updated',
      ]);
      expect(await storedPetState(t, pet.id)).toEqual({ status: 'pending', revision: 4 });
    });

    it('a millisecond before expiresAt the hold still holds', async () => {
      const { pet, order } = await held();
      clock.setTo(at(59.999));
      const refused = await t.request('POST', '/v1/orders', { body: { petId: pet.id } });
      expect(refused.statusCode).toBe(409);
      expect((await storedOrder(t, order.id))!.status).toBe('open');
      const status = await patch(pet.id, { status: 'available' });
      expect(status.statusCode).toBe(409);
      expect(status.json()).toEqual({
        code: 'PET_HELD',
        message: `Pet ${pet.id} is held by an open order: complete or cancel the order first`,
        status: 409,
      });
    });

    it('a held pet may be renamed and moved to another category, but not change its status', async () => {
      const { pet, last } = await held();

      const renamed = await patch(pet.id, { name: 'Max', categoryId: 4 });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toEqual({ id: pet.id, name: 'Max', categoryId: 4, status: 'pending' });
      for (const status of ['available', 'pending', 'sold']) {
        const refused = await patch(pet.id, { name: 'Bella', status });
        expect(refused.statusCode).toBe(409);
        expect(refused.json().code).toBe('PET_HELD');
      }
      // 412 comes before the hold's 409.
      const stale = await t.request('PATCH', `/v1/pets/${pet.id}`, {
        body: { status: 'sold' },
        headers: { ...MERGE_PATCH, 'if-match': `"${pet.id}-1"` },
      });
      expect(stale.statusCode).toBe(412);
      expect(await typesAfter(t, last.id)).toEqual(['pet.updated']);
      expect(await storedPetState(t, pet.id)).toEqual({ status: 'pending', revision: 3 });
    });

    it('a PATCH of the pet at expiresAt: the lapsed order expires first, then the patch applies', async () => {
      const { pet, order, last } = await held();
      clock.setTo(at(61));

      const sold = await patch(pet.id, { status: 'sold' });

      expect(sold.statusCode).toBe(200);
      expect(sold.json()).toEqual({ id: pet.id, name: 'Rex', categoryId: 3, status: 'sold' });
      expect(sold.headers.etag).toBe(`"${pet.id}-4"`);
      expect(await storedOrder(t, order.id)).toMatchObject({ status: 'expired', revision: 2 });
      const events = await eventsAfter(t, last.id);
      expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
        {
          type: 'order.expired',
          data: { order: { ...order, status: 'expired', closedAt: order.expiresAt } },
        },
        {
          type: 'pet.updated',
          data: {
            pet: { id: pet.id, name: 'Rex', categoryId: 3, status: 'available' },
            previous: { status: 'pending' },
          },
        },
        {
          type: 'pet.updated',
          data: {
            pet: { id: pet.id, name: 'Rex', categoryId: 3, status: 'sold' },
            previous: { status: 'available' },
          },
        },
      ]);
    });

    it('a rename at expiresAt also ends the hold first', async () => {
      const { pet } = await held();
      clock.setTo(at(60));
      const renamed = await patch(pet.id, { name: 'Max' });
      expect(renamed.json()).toEqual({
        id: pet.id,
        name: 'Max',
        categoryId: 3,
        status: 'available',
      });
    });

    it('at the deadline, concurrent completions, cancellations and patches expire it once', async () => {
      const { pet, order, last } = await held();
      clock.setTo(at(60));
      const post = (url: string, body?: object) => t.request('POST', url, { body });

      const responses = await Promise.all([
        ...Array.from({ length: 10 }, (_, i) =>
          post(`/v1/orders/${order.id}/${i % 2 ? 'complete' : 'cancel'}`),
        ),
        ...Array.from({ length: 5 }, () => patch(pet.id, { name: 'Max' })),
      ]);

      expect(responses.slice(0, 10).map((r) => r.statusCode)).toEqual(Array(10).fill(409));
      for (const refused of responses.slice(0, 10))
        expect(refused.json().message).toBe(
          `Order ${order.id} is expired: only an open order can be completed or cancelled`,
        );
      expect(responses.slice(10).map((r) => r.statusCode)).toEqual(Array(5).fill(200));
      const types = await typesAfter(t, last.id);
      expect(types.filter((type) => type === 'order.expired')).toHaveLength(1);
      expect(types.slice(0, 2)).toEqual(['order.expired', 'pet.updated']);
      expect(await storedPetState(t, pet.id)).toMatchObject({ status: 'available' });
    });
  },
);

describe.each(ENGINES)('the expiry sweep [%s]', (engine) => {
  let t: TestApp;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, { clock });
  });
  afterAll(() => t?.close());

  it('commits every lapsed hold that no write touched within 5 s of its deadline, once', async () => {
    clock.setTo(NOW);
    const pets = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        createPet(t, { name: `Pet ${i}`, categoryId: 1, status: 'available' }),
      ),
    );
    const orders: Order[] = [];
    for (const [i, pet] of pets.entries())
      orders.push(await placeOrder(t, { petId: pet.id, holdSeconds: i < 20 ? 60 : 120 }));
    const [last] = (await eventsAfter(t)).slice(-1);

    clock.setTo(at(60));
    const deadline = Date.now();
    const lapsed = orders.slice(0, 20);
    const expiredCount = async () =>
      Number(
        (await t.dataSource.query(`SELECT count(*) AS n FROM orders WHERE status = 'expired'`))[0]
          .n,
      );
    await waitFor(async () => (await expiredCount()) === 20, 5_000);
    expect(Date.now() - deadline).toBeLessThan(5_000);

    for (const order of lapsed)
      expect(await storedOrder(t, order.id)).toMatchObject({
        status: 'expired',
        closedAt: order.expiresAt,
      });
    for (const order of orders.slice(20))
      expect((await storedOrder(t, order.id))!.status).toBe('open');
    const events = await eventsAfter(t, last.id);
    expect(events).toHaveLength(40);
    // Each expiry sits next to its pet's change.
    for (let i = 0; i < 40; i += 2) {
      expect(events[i].type).toBe('order.expired');
      const { order } = events[i].data as { order: Order };
      expect(events[i + 1]).toMatchObject({
        type: 'pet.updated',
        data: { pet: { id: order.petId, status: 'available' }, previous: { status: 'pending' } },
      });
    }
  });

  it('stores the events it writes as the JSON text JSON.stringify writes, whatever the pet is named', async () => {
    clock.setTo(at(600));
    const name = 'Rex "the\\one"\n\t\u0001\u001f\u007f é 🐕 \u2028 </script>';
    const pet = await createPet(t, { name, categoryId: 1, status: 'available' });
    const order = await placeOrder(t, { petId: pet.id, holdSeconds: 60 });
    const [{ last }] = await t.dataSource.query<{ last: string }[]>(
      'SELECT max(seq) AS last FROM pet_events',
    );

    clock.setTo(at(660));
    await waitFor(async () => (await storedOrder(t, order.id))?.status === 'expired', 5_000);

    const expired = (await t.request('GET', `/v1/orders/${order.id}`)).json<Order>();
    expect(expired).toMatchObject({ status: 'expired', closedAt: order.expiresAt });
    const stored = await t.dataSource.query<{ type: string; pet: string; previous: string }[]>(
      `SELECT type, pet, previous FROM pet_events WHERE pet_id = ${pet.id} AND seq > ${Number(last)}
      ORDER BY seq`,
    );
    expect(stored).toEqual([
      { type: 'order.expired', pet: JSON.stringify(expired), previous: null },
      {
        type: 'pet.updated',
        pet: JSON.stringify({ id: pet.id, name, categoryId: 1, status: 'available' }),
        previous: JSON.stringify({ status: 'pending' }),
      },
    ]);
  });
});
