import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { OrderMetrics } from '../../../src/orders/order-metrics.js';
import type { OrdersRepository } from '../../../src/orders/orders.repository.js';
import { Clock } from '../../../src/time/clock.js';

const ORDERS = {} as OrdersRepository;

describe('OrderMetrics.expired', () => {
  it('counts a batch of the sweep’s expiries and observes each one’s lag, early ones as 0', async () => {
    const metrics = new Metrics();
    const orderMetrics = new OrderMetrics(ORDERS, new Clock(), metrics);
    const now = new Date('2026-01-01T00:00:10.000Z');
    const deadlines = ['00:00:07.500', '00:00:09.000', '00:00:11.000'].map(
      (time) => new Date(`2026-01-01T${time}Z`),
    );
    orderMetrics.expired(deadlines, now);

    const text = await metrics.registry.metrics();
    expect(text).toContain('animal_store_orders_total{outcome="expired"} 3');
    expect(text).toContain('animal_store_order_expiry_lag_seconds_count 3');
    expect(text).toContain('animal_store_order_expiry_lag_seconds_sum 3.5');
  });

  it('keeps nothing without metrics', () => {
    const orderMetrics = new OrderMetrics(ORDERS, new Clock());
    expect(() => orderMetrics.expired([new Date()], new Date())).not.toThrow();
  });
});
