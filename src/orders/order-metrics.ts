import { Injectable, Logger, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { Metrics } from '../metrics/metrics.js';
import { untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import type { OrderEventType } from '../events/pet-event.js';
import type { OrderChange } from './orders.repository.js';
import { OrdersRepository } from './orders.repository.js';

/** Upper bounds in seconds from a deadline to its expiry's commit: the 5 s line in the middle. */
const EXPIRY_LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 7.5, 10, 30, 60, 300];

/**
 * The order metrics (docs/observability.md, "Orders"); nothing is kept without METRICS_PORT.
 * Changes are counted as this instance commits them; the open holds and how overdue the oldest
 * lapsed one is are read from the database at each scrape, the same on every instance.
 */
@Injectable()
export class OrderMetrics {
  private readonly logger = new Logger('OrderMetrics');
  private readonly changes?: Counter<'outcome'>;
  private readonly expiryLag?: Histogram;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly clock: Clock,
    @Optional() metrics?: Metrics,
  ) {
    if (!metrics) return;
    const registers = [metrics.registry];
    this.changes = new Counter({
      name: 'animal_store_orders_total',
      help: 'Order changes committed by this instance, by outcome (created, completed, cancelled, expired).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.expiryLag = new Histogram({
      name: 'animal_store_order_expiry_lag_seconds',
      help: 'Time from an order’s expiresAt to the commit of its expiry, by the write that met it or by the sweep.',
      buckets: EXPIRY_LAG_BUCKETS,
      registers,
    });
    this.registerHoldGauges(registers);
  }

  /** A change this instance committed at `now`. */
  changed(type: OrderEventType, { order }: OrderChange, now: Date): void {
    this.changes?.inc({ outcome: type.slice('order.'.length) });
    if (type === 'order.expired')
      this.expiryLag?.observe(Math.max(0, now.getTime() - order.expiresAt.getTime()) / 1000);
  }

  /** Expiries the sweep committed at `now` in one batch, by their deadlines. */
  expired(deadlines: Date[], now: Date): void {
    if (!this.changes || !this.expiryLag) return;
    this.changes.inc({ outcome: 'expired' }, deadlines.length);
    for (const deadline of deadlines)
      this.expiryLag.observe(Math.max(0, now.getTime() - deadline.getTime()) / 1000);
  }

  private registerHoldGauges(registers: Metrics['registry'][]): void {
    const read = () => this.readHolds();
    let reading: ReturnType<typeof read> | undefined;
    // One read for both gauges: a scrape collects them at once.
    const holds = () => (reading ??= read().finally(() => (reading = undefined)));
    new Gauge({
      name: 'animal_store_orders_open',
      help: 'Orders open now, holding their pets; read from the database at each scrape.',
      registers,
      async collect() {
        this.set((await holds()).open);
      },
    });
    new Gauge({
      name: 'animal_store_order_holds_overdue_seconds',
      help: 'How long past its expiresAt the oldest open order is: the sweep’s lag, 0 when none is overdue. Past 5 s the sweep is not keeping its promise.',
      registers,
      async collect() {
        this.set((await holds()).overdueSeconds);
      },
    });
  }

  /** A database that does not answer gives zeros rather than a failed scrape: readiness says so. */
  private async readHolds(): Promise<{ open: number; overdueSeconds: number }> {
    const now = this.clock.now();
    try {
      const { open, oldestLapsed } = await untraced(() => this.orders.holds(now));
      const overdueMs = oldestLapsed ? now.getTime() - oldestLapsed.getTime() : 0;
      return { open, overdueSeconds: Math.max(0, overdueMs) / 1000 };
    } catch (error) {
      this.logger.warn(`reading the open orders failed: ${(error as Error).message}`);
      return { open: 0, overdueSeconds: 0 };
    }
  }
}
