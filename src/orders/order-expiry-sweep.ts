import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import { OrderMetrics } from './order-metrics.js';
import { OrdersRepository } from './orders.repository.js';

/** How often the sweep looks for lapsed holds: well inside the 5 s it has to expire them. */
const SWEEP_MS = 1000;
/** Orders expired per transaction: a commit costs mostly by the pages it writes, not its rows. */
export const SWEEP_BATCH = 500;
/**
 * A batch starts at most this often: 2.2 × the 1,000/s the 5 s promise is sized for, while every
 * expiry's rows and events cost the writes served meanwhile (docs/performance.md, "Current figures").
 */
export const SWEEP_BATCH_MS = 225;

/**
 * Commits the expiry of every open order whose deadline passed and that no write has touched
 * since (docs/api-design.md, "Orders"): with its pet made available again and both events, within
 * 5 s of the deadline. On PostgreSQL one instance sweeps at a time (an advisory lock); a killed
 * process leaves nothing half done, as each batch is one transaction, and the next pass of any
 * instance, a restarted one included, carries on.
 */
@Injectable()
export class OrderExpirySweep implements BeforeApplicationShutdown {
  private readonly logger = new Logger('OrderExpirySweep');
  /** The pass under way; undefined between passes. */
  private pass?: Promise<void>;
  private readonly stopping = new AbortController();

  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: PetEventsRepository,
    private readonly metrics: OrderMetrics,
    private readonly clock: Clock,
  ) {}

  @Interval(SWEEP_MS)
  async expireLapsedHolds(): Promise<void> {
    // A pass that outlasts the interval is not joined by the next one; none starts after SIGTERM.
    if (this.pass || this.stopping.signal.aborted) return;
    // A look every second on every instance: not a trace each (as the webhook worker's polls).
    this.pass = untraced(() => this.sweep())
      .then(
        () => {},
        (error: unknown) =>
          this.logger.warn(`lapsed orders not expired: ${(error as Error).message}`),
      )
      .finally(() => (this.pass = undefined));
    await this.pass;
  }

  /** SIGTERM: the pass under way ends after its batch in flight, which commits or rolls back. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.pass;
  }

  /**
   * Batches until fewer than a full one are left, one starting every SWEEP_BATCH_MS; how many
   * expired. Back to back, a backlog's batches held SQLite's writer and the event loop nearly all
   * the time, starving every other write (docs/performance.md, "Current figures").
   */
  async sweep(): Promise<number> {
    // A read first: no write transaction (and on SQLite, no write lock) while nothing lapsed.
    if (!(await this.orders.findOldestLapsed(this.clock.now()))) return 0;
    let expired = 0;
    for (;;) {
      const started = this.clock.elapsedMs();
      const deadlines = await this.orders.expireLapsed(this.clock.now(), SWEEP_BATCH);
      expired += deadlines.length;
      if (deadlines.length > 0) {
        this.events.committed('order.expired', deadlines.length);
        this.events.committed('pet.updated', deadlines.length);
        this.metrics.expired(deadlines, this.clock.now());
      }
      if (deadlines.length < SWEEP_BATCH) return expired;
      await this.clock.waitUntil(started + SWEEP_BATCH_MS, this.stopping.signal);
      if (this.stopping.signal.aborted) return expired;
    }
  }
}
