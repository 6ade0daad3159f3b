import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import { OrderMetrics } from './order-metrics.js';
import { OrdersRepository } from './orders.repository.js';

/** How often the sweep looks for lapsed holds: well inside the 5 s it has to expire them. */
const SWEEP_MS = 1000;
/** Orders expired per transaction: large enough for 1,000 a second, small enough to commit fast. */
export const SWEEP_BATCH = 500;

/**
 * Commits the expiry of every open order whose deadline passed and that no write has touched
 * since (docs/api-design.md, "Orders"): with its pet made available again and both events, within
 * 5 s of the deadline. On PostgreSQL one instance sweeps at a time (an advisory lock); a killed
 * process leaves nothing half done, as each batch is one transaction, and the next pass of any
 * instance, a restarted one included, carries on.
 */
@Injectable()
export class OrderExpirySweep {
  private readonly logger = new Logger('OrderExpirySweep');
  private running = false;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: PetEventsRepository,
    private readonly metrics: OrderMetrics,
    private readonly clock: Clock,
  ) {}

  @Interval(SWEEP_MS)
  async expireLapsedHolds(): Promise<void> {
    // A pass that outlasts the interval is not joined by the next one.
    if (this.running) return;
    this.running = true;
    try {
      // A look every second on every instance: not a trace each (as the webhook worker's polls).
      await untraced(() => this.sweep());
    } catch (error) {
      this.logger.warn(`lapsed orders not expired: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /**
   * Batches until fewer than a full one are left; how many expired. Requests go on between
   * batches: each is one short transaction.
   */
  async sweep(): Promise<number> {
    // A read first: no write transaction (and on SQLite, no write lock) while nothing lapsed.
    if (!(await this.orders.findOldestLapsed(this.clock.now()))) return 0;
    let expired = 0;
    for (;;) {
      const deadlines = await this.orders.expireLapsed(this.clock.now(), SWEEP_BATCH);
      expired += deadlines.length;
      if (deadlines.length > 0) {
        this.events.committed('order.expired', deadlines.length);
        this.events.committed('pet.updated', deadlines.length);
        this.metrics.expired(deadlines, this.clock.now());
      }
      if (deadlines.length < SWEEP_BATCH) return expired;
    }
  }
}
