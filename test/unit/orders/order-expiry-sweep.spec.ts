import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { PetEventsRepository } from '../../../src/events/pet-events.repository.js';
import {
  OrderExpirySweep,
  SWEEP_BATCH,
  SWEEP_BATCH_MS,
} from '../../../src/orders/order-expiry-sweep.js';
import type { OrderMetrics } from '../../../src/orders/order-metrics.js';
import type { OrdersRepository } from '../../../src/orders/orders.repository.js';
import { Clock } from '../../../src/time/clock.js';

/** A sweep over a backlog of `full` full batches and then `last` orders; when each batch began. */
function sweepOver(full: number, last: number) {
  const started: number[] = [];
  const orders = {
    findOldestLapsed: vi.fn(() => Promise.resolve(new Date(0))),
    // A plain function, not a spy: the mark is taken as near the sweep's own as the call allows.
    expireLapsed: () => {
      started.push(performance.now());
      const count = started.length <= full ? SWEEP_BATCH : last;
      return Promise.resolve(Array.from({ length: count }, () => new Date(0)));
    },
  };
  const events = { committed: vi.fn() };
  const metrics = { expired: vi.fn() };
  const sweep = new OrderExpirySweep(
    orders as unknown as OrdersRepository,
    events as unknown as PetEventsRepository,
    metrics as unknown as OrderMetrics,
    new Clock(),
  );
  return { sweep, orders, events, metrics, started };
}

describe('OrderExpirySweep', () => {
  it('starts a backlog’s batches SWEEP_BATCH_MS apart, and ends at a batch that is not full', async () => {
    const { sweep, events, metrics, started } = sweepOver(3, 7);
    expect(await sweep.sweep()).toBe(3 * SWEEP_BATCH + 7);
    expect(started).toHaveLength(4);
    for (let i = 1; i < started.length; i++)
      // Timers may fire a millisecond early by performance.now().
      expect(started[i] - started[i - 1]).toBeGreaterThanOrEqual(SWEEP_BATCH_MS - 1);
    // Counted once a batch, not once an order.
    expect(events.committed).toHaveBeenCalledTimes(8);
    expect(events.committed).toHaveBeenCalledWith('order.expired', SWEEP_BATCH);
    expect(events.committed).toHaveBeenLastCalledWith('pet.updated', 7);
    expect(metrics.expired).toHaveBeenCalledTimes(4);
  });

  it('counts nothing for a batch that expired none', async () => {
    const { sweep, events, metrics } = sweepOver(0, 0);
    expect(await sweep.sweep()).toBe(0);
    expect(events.committed).not.toHaveBeenCalled();
    expect(metrics.expired).not.toHaveBeenCalled();
  });

  it('on shutdown ends the pass between batches without waiting out the pause, and starts none', async () => {
    const { sweep, orders, started } = sweepOver(Infinity, 0);
    const pass = sweep.expireLapsedHolds();
    await vi.waitFor(() => expect(started).toHaveLength(2));
    const stopping = performance.now();
    await sweep.beforeApplicationShutdown();
    expect(performance.now() - stopping).toBeLessThan(SWEEP_BATCH_MS / 2);
    await pass;
    await sleep(SWEEP_BATCH_MS);
    expect(started).toHaveLength(2);

    await sweep.expireLapsedHolds();
    expect(orders.findOldestLapsed).toHaveBeenCalledTimes(1);
  });
});
