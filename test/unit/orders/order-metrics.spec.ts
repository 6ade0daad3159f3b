import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { OrderMetrics } from '../../../src/orders/order-metrics.js';
import type { OrdersRepository } from '../../../src/orders/orders.repository.js';
import { Clock } from '../../../src/time/clock.js';

/** The orders table as the hold gauges read it: `open` orders, the oldest lapsed at `oldestLapsed`. */
function ordersHolding(open: number, oldestLapsed: Date | null): OrdersRepository {
  return { holds: () => Promise.resolve({ open, oldestLapsed }) } as unknown as OrdersRepository;
}

const ORDERS = ordersHolding(0, null);

/** A clock stopped at `at`. */
function clockAt(at: string): Clock {
  const clock = new Clock();
  clock.now = () => new Date(at);
  return clock;
}

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

describe('OrderMetrics hold gauges', () => {
  it('reads the open orders and how long past its deadline the oldest lapsed one is', async () => {
    const metrics = new Metrics();
    const orders = ordersHolding(7, new Date('2026-01-01T00:00:03.500Z'));
    new OrderMetrics(orders, clockAt('2026-01-01T00:00:10.000Z'), metrics);

    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^animal_store_orders_open 7$/m);
    expect(text).toMatch(/^animal_store_order_holds_overdue_seconds 6\.5$/m);
  });

  it('says 0 overdue when no hold has lapsed', async () => {
    const metrics = new Metrics();
    new OrderMetrics(ordersHolding(2, null), clockAt('2026-01-01T00:00:10.000Z'), metrics);

    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^animal_store_orders_open 2$/m);
    expect(text).toMatch(/^animal_store_order_holds_overdue_seconds 0$/m);
  });

  it('gives zeros rather than a failed scrape when the database does not answer', async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    const metrics = new Metrics();
    const failing = {
      holds: () => Promise.reject(new Error('connection refused')),
    } as unknown as OrdersRepository;
    new OrderMetrics(failing, new Clock(), metrics);

    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^animal_store_orders_open 0$/m);
    expect(text).toMatch(/^animal_store_order_holds_overdue_seconds 0$/m);
    expect(warn).toHaveBeenCalledWith('reading the open orders failed: connection refused');
    warn.mockRestore();
  });
});
