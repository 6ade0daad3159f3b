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

/** Time that moves only as the sweep waits and as a batch takes: pacing without the machine's. */
class PacingClock extends Clock {
  private at = 0;

  override elapsedMs(): number {
    return this.at;
  }

  override async waitUntil(at: number, signal: AbortSignal): Promise<void> {
    await Promise.resolve();
    if (!signal.aborted) this.at = Math.max(this.at, at);
  }

  /** Moves the time on by `ms`, as work that takes that long. */
  take(ms: number): void {
    this.at += ms;
  }
}

/** How long each stub batch takes: the pause after it counts from its start, not its end. */
const BATCH_TAKES_MS = 40;

/**
 * A sweep over a backlog of `full` full batches and then `last` orders; when each batch began.
 * `clock`: real time when given, else a PacingClock.
 */
function sweepOver(full: number, last: number, clock: Clock = new PacingClock()) {
  const started: number[] = [];
  const orders = {
    findOldestLapsed: vi.fn(() => Promise.resolve(new Date(0))),
    expireLapsed: vi.fn(() => {
      started.push(clock.elapsedMs());
      if (clock instanceof PacingClock) clock.take(BATCH_TAKES_MS);
      const count = started.length <= full ? SWEEP_BATCH : last;
      return Promise.resolve(Array.from({ length: count }, () => new Date(0)));
    }),
  };
  const events = { committed: vi.fn() };
  const metrics = { expired: vi.fn() };
  const sweep = new OrderExpirySweep(
    orders as unknown as OrdersRepository,
    events as unknown as PetEventsRepository,
    metrics as unknown as OrderMetrics,
    clock,
  );
  return { sweep, orders, events, metrics, started };
}

describe('OrderExpirySweep', () => {
  it('starts a backlog’s batches SWEEP_BATCH_MS apart, and ends at a batch that is not full', async () => {
    const { sweep, events, metrics, started } = sweepOver(3, 7);
    expect(await sweep.sweep()).toBe(3 * SWEEP_BATCH + 7);
    expect(started).toHaveLength(4);
    expect(started).toEqual([0, 1, 2, 3].map((batch) => batch * SWEEP_BATCH_MS));
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
    const { sweep, orders, started } = sweepOver(Infinity, 0, new Clock());
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
