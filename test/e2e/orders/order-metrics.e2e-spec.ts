import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsServer } from '../../../src/metrics/metrics-server.js';
import { createPet } from '../../support/pets-api.js';
import { placeOrder, WITHOUT_SWEEP } from '../../support/orders-api.js';
import { startTestApp, type TestApp, TestClock } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const NOW = new Date('2026-11-29T10:00:00.000Z');

describe.each(ENGINES)('order metrics [%s]', (engine) => {
  let t: TestApp;
  let metricsUrl: string;
  const clock = new TestClock();

  beforeAll(async () => {
    clock.setTo(NOW);
    t = await startTestApp(
      engine,
      { METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '0' },
      { clock, ...WITHOUT_SWEEP },
    );
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsServer).address()}/metrics`;
  });
  afterAll(() => t?.close());

  /** The value of each sample line whose name and labels start with `prefix`. */
  const samples = async (prefix: string) =>
    Object.fromEntries(
      (await (await fetch(metricsUrl)).text())
        .split('\n')
        .filter((line) => line.startsWith(prefix))
        .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.split(' ').at(-1))]),
    );

  it('counts orders by outcome, reads open and overdue holds, and the expiry lag', async () => {
    const pets = await Promise.all(
      [1, 2, 3, 4].map((i) => createPet(t, { name: `P${i}`, categoryId: 1, status: 'available' })),
    );
    const orders = [];
    for (const [i, pet] of pets.entries())
      orders.push(await placeOrder(t, { petId: pet.id, holdSeconds: 60 * (i + 1) }));
    await t.request('POST', `/v1/orders/${orders[0].id}/complete`);
    await t.request('POST', `/v1/orders/${orders[1].id}/cancel`);

    // Orders 2 (180 s) and 3 (240 s) stay open; at 190 s order 2 is 10 s overdue, and a
    // write meets it.
    clock.setTo(new Date(NOW.getTime() + 190_000));
    expect(await samples('animal_store_order_holds_overdue_seconds')).toEqual({
      animal_store_order_holds_overdue_seconds: 10,
    });
    expect((await t.request('POST', `/v1/orders/${orders[2].id}/complete`)).statusCode).toBe(409);

    expect(await samples('animal_store_orders_total')).toEqual({
      'animal_store_orders_total{outcome="created"}': 4,
      'animal_store_orders_total{outcome="completed"}': 1,
      'animal_store_orders_total{outcome="cancelled"}': 1,
      'animal_store_orders_total{outcome="expired"}': 1,
    });
    expect(await samples('animal_store_orders_open')).toEqual({ animal_store_orders_open: 1 });
    expect(await samples('animal_store_order_holds_overdue_seconds')).toEqual({
      animal_store_order_holds_overdue_seconds: 0,
    });
    expect(await samples('animal_store_order_expiry_lag_seconds_count')).toEqual({
      animal_store_order_expiry_lag_seconds_count: 1,
    });
    expect(await samples('animal_store_order_expiry_lag_seconds_sum')).toEqual({
      animal_store_order_expiry_lag_seconds_sum: 10,
    });
  });
});
