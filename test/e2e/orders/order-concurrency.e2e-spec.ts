import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet } from '../../support/pets-api.js';
import {
  eventsAfter,
  placeOrder,
  storedPetState,
  WITHOUT_SWEEP,
} from '../../support/orders-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const BUYERS = 50;

const statusesOf = (responses: Response[]) =>
  responses.reduce<Record<number, number>>((counts, { statusCode }) => {
    counts[statusCode] = (counts[statusCode] ?? 0) + 1;
    return counts;
  }, {});

describe.each(ENGINES)('orders under concurrency [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, WITHOUT_SWEEP);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM orders');
    await t.dataSource.query('DELETE FROM pets');
  });

  const inject = (app: NestFastifyApplication, url: string, body?: object) =>
    app.inject({
      method: 'POST',
      url,
      headers: {
        authorization: `Bearer ${t.key}`,
        ...(body && { 'content-type': 'application/json' }),
      },
      ...(body && { payload: JSON.stringify(body) }),
    });
  const storedOrders = async () =>
    (
      await t.dataSource.query<{ pet_id: number | string; status: string }[]>(
        'SELECT pet_id, status FROM orders ORDER BY id',
      )
    ).map(({ pet_id, status }) => ({ petId: Number(pet_id), status }));

  /** Places `BUYERS` orders of one pet at once, through `apps` in turn. */
  async function race(apps: NestFastifyApplication[]) {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const [last] = (await eventsAfter(t)).slice(-1);
    const responses = await Promise.all(
      Array.from({ length: BUYERS }, (_, i) =>
        inject(apps[i % apps.length], '/v1/orders', { petId: pet.id }),
      ),
    );
    expect(statusesOf(responses)).toEqual({ 201: 1, 409: BUYERS - 1 });
    for (const refused of responses.filter((r) => r.statusCode === 409)) {
      expect(refused.json()).toEqual({
        code: 'PET_NOT_AVAILABLE',
        message: `Pet ${pet.id} is pending, held by an open order: only an available pet can be ordered`,
        status: 409,
      });
    }
    expect(await storedOrders()).toEqual([{ petId: pet.id, status: 'open' }]);
    expect(await storedPetState(t, pet.id)).toEqual({ status: 'pending', revision: 2 });
    // One order.created and one pet.updated: the refused buyers committed nothing.
    expect((await eventsAfter(t, last.id)).map(({ type }) => type)).toEqual([
      'order.created',
      'pet.updated',
    ]);
  }

  it(`of ${BUYERS} concurrent orders of one pet exactly one is 201, the rest 409`, () =>
    race([t.app]));

  it('of a completion and a cancellation racing, exactly one wins and the pet agrees', async () => {
    for (let round = 0; round < 10; round++) {
      const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
      const { id } = await placeOrder(t, { petId: pet.id });
      const [completed, cancelled] = await Promise.all([
        inject(t.app, `/v1/orders/${id}/complete`),
        inject(t.app, `/v1/orders/${id}/cancel`),
      ]);
      expect([completed.statusCode, cancelled.statusCode].sort()).toEqual([200, 409]);
      const won = completed.statusCode === 200 ? 'completed' : 'cancelled';
      const lost = completed.statusCode === 200 ? cancelled : completed;
      expect(lost.json()).toEqual({
        code: 'ORDER_NOT_OPEN',
        message: `Order ${id} is ${won}: only an open order can be completed or cancelled`,
        status: 409,
      });
      expect(await storedPetState(t, pet.id)).toEqual({
        status: won === 'completed' ? 'sold' : 'available',
        revision: 3,
      });
    }
  });

  it(`of ${BUYERS} completions of one order exactly one sells the pet`, async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const { id } = await placeOrder(t, { petId: pet.id });
    const responses = await Promise.all(
      Array.from({ length: BUYERS }, () => inject(t.app, `/v1/orders/${id}/complete`)),
    );
    expect(statusesOf(responses)).toEqual({ 200: 1, 409: BUYERS - 1 });
    expect(await storedPetState(t, pet.id)).toEqual({ status: 'sold', revision: 3 });
  });

  describe.runIf(engine === 'postgres')('across two instances', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it(`of ${BUYERS} orders split over both, exactly one is 201`, () => race([t.app, second]));
  });
});
