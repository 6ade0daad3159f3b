import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { eventIdOf, type EventPosition } from '../events/event-position.js';
import { eventJson } from '../events/event-json.js';
import { PetEventsRepository, type StoredPetEvent } from '../events/pet-events.repository.js';
import { inLinkedRootSpan, untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import { nextAttemptDelayMs, retryAfterMs } from './retry-schedule.js';
import {
  type DueDelivery,
  type LeasedSubscription,
  WebhookDeliveriesRepository,
} from './webhook-deliveries.repository.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { type AttemptOutcome, WebhookSender } from './webhook-sender.js';
import { signedHeaders } from './webhook-signature.js';

/** Looks for owed and due deliveries this often even without a commit to wake it. */
const POLL_MS = 1_000;
/**
 * At most one pass per this many milliseconds: each pass reads and writes the database, so under
 * a stream of commits one pass per commit would cost every write its own (docs/performance.md).
 */
const MIN_PASS_INTERVAL_MS = 50;
/** Events read per query when recording what a subscription is owed. */
const EVENT_BATCH = 100;
/** Due deliveries read per query while sending for one subscription. */
const DELIVERY_BATCH = 20;
/** Subscriptions this instance sends for at once: a slow receiver holds up only its own. */
const MAX_SUBSCRIPTIONS_AT_ONCE = 8;
/** A lease outlasts the attempt it is extended for by this much, for the writes around it. */
const LEASE_MARGIN_MS = 10_000;
/**
 * How long SIGTERM waits for the attempts in flight before cutting them off: well inside the
 * process's 10 s to stop (docs/api-design.md, "Operations").
 */
const SHUTDOWN_WAIT_MS = 5_000;

/**
 * Sends the webhooks (docs/events.md, "Webhooks"), in every instance. A pass first records, for
 * each enabled subscription, a delivery owed for each matching event after its cursor, moving the
 * cursor in the same transaction; then it leases subscriptions with deliveries due and sends each
 * one's, in event order, one at a time. The lease is checked before every batch and always
 * outlasts the attempt under way, so two instances never send for one subscription at once.
 * Commits in this process, commits anywhere (ChangeNotifications) and a timer wake it; everything
 * it knows is in the database.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDeliveryWorker');
  /** Names this instance's leases. */
  private readonly owner = randomUUID();
  private readonly sending = new Map<number, Promise<void>>();
  private timer?: NodeJS.Timeout;
  /** The pass running now; undefined between passes. */
  private running?: Promise<void>;
  private wokenAgain = false;
  private stopping = false;
  /** Aborted when SIGTERM has waited long enough for the attempts in flight. */
  private readonly cutOff = new AbortController();

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly events: PetEventsRepository,
    private readonly sender: WebhookSender,
    private readonly notifications: ChangeNotifications,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: WebhookMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.events.onCommitted(() => this.wake());
    this.notifications.listen(() => this.wake());
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /**
   * SIGTERM: claims nothing more, lets the attempts in flight end for up to 5 s, cuts off those
   * still waiting for an answer (unrecorded: they stay due, and may arrive twice), and releases
   * the leases, so another instance takes over at once.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    const finished = Promise.all([this.running, ...this.sending.values()]);
    const waited = setTimeout(() => this.cutOff.abort(), SHUTDOWN_WAIT_MS);
    await finished;
    clearTimeout(waited);
  }

  /** Runs a pass, or another after the one running, at most one per MIN_PASS_INTERVAL_MS. */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.wokenAgain = true;
      return;
    }
    const startedAt = Date.now();
    this.running = untraced(() => this.pass()).finally(() => {
      const wait = Math.max(0, startedAt + MIN_PASS_INTERVAL_MS - Date.now());
      setTimeout(() => {
        this.running = undefined;
        if (!this.wokenAgain) return;
        this.wokenAgain = false;
        this.wake();
      }, wait).unref();
    });
  }

  private async pass(): Promise<void> {
    try {
      await this.recordOwed();
      await this.claimAndSend();
    } catch (error) {
      // The next wake tries again: what is owed is in the database.
      this.logger.warn(`webhook pass failed: ${(error as Error).message}`);
    }
  }

  /** Records the deliveries owed for the events committed after each subscription's cursor. */
  private async recordOwed(): Promise<void> {
    for (const { id, eventTypes, after } of await this.deliveries.findCursors()) {
      let from = after;
      for (;;) {
        const page = await this.events.findPage(from, EVENT_BATCH);
        if (page.length === 0) break;
        const owed = page.filter((event) => eventTypes?.includes(event.type) ?? true);
        const to = page.at(-1)!;
        if (!(await this.deliveries.recordOwed(id, from, to, owed, this.firstAttemptAt()))) break;
        from = to;
        if (page.length < EVENT_BATCH) break;
      }
    }
  }

  private async claimAndSend(): Promise<void> {
    const free = MAX_SUBSCRIPTIONS_AT_ONCE - this.sending.size;
    if (free <= 0 || this.stopping) return;
    const now = this.clock.now();
    const leasedUntil = this.leaseEnd(now);
    const claimed = await this.deliveries.claimDue(now, leasedUntil, this.owner, free);
    for (const id of claimed) {
      // The lease is released before this settles: a later pass may have claimed it again.
      const sending: Promise<void> = this.sendDue(id, leasedUntil).finally(() => {
        if (this.sending.get(id) === sending) this.sending.delete(id);
      });
      this.sending.set(id, sending);
    }
  }

  /**
   * Sends the subscription's due deliveries in event order until none is due, then lets go.
   * `leasedUntil`: when the lease claimed for it ends. The deliveries a batch got through are
   * deleted together when it ends, and before the lease is let go: one write per batch, not one
   * per delivery, at the price of resending at most a batch after a crash (at least once).
   */
  private async sendDue(id: number, leasedUntil: Date): Promise<void> {
    const sent: SendingState = { leasedUntil, delivered: [] };
    try {
      for (;;) {
        const due = await this.deliveries.findDue(id, this.clock.now(), DELIVERY_BATCH);
        if (due.length === 0) return;
        let leased = await this.deliveries.findLeased(id, this.owner);
        const events = await this.events.findAllAt(due.map((delivery) => delivery.event));
        const eventAt = new Map(events.map((event) => [eventIdOf(event), event]));
        for (const delivery of due) {
          if (this.stopping || !leased) return;
          leased = await this.holdLease(id, sent, leased);
          if (!leased) return;
          const event = eventAt.get(eventIdOf(delivery.event));
          const outcome = await this.attempt(leased, delivery, event);
          if (outcome === 'succeeded') {
            sent.delivered.push(delivery.event);
            sent.lastSuccessAt = this.clock.now();
          }
          if (outcome === 'stop') return;
        }
        await this.recordDelivered(id, sent);
      }
    } catch (error) {
      this.logger.warn(`webhook ${id}: deliveries not sent: ${(error as Error).message}`);
    } finally {
      await this.recordDelivered(id, sent).catch(() => {});
      await this.deliveries.releaseLease(id, this.owner).catch(() => {});
    }
  }

  private async recordDelivered(id: number, sent: SendingState): Promise<void> {
    if (sent.delivered.length === 0) return;
    await this.deliveries.recordSuccesses(id, sent.delivered, sent.lastSuccessAt!);
    sent.delivered = [];
  }

  /**
   * The subscription for the next attempt: as read at the start of its batch (still enabled,
   * still ours, its secrets), or, when less than an attempt and half the margin of the lease is
   * left, read again as the lease is extended, so an attempt always ends inside its lease.
   */
  private async holdLease(
    id: number,
    sent: SendingState,
    leased: LeasedSubscription,
  ): Promise<LeasedSubscription | undefined> {
    const now = this.clock.now();
    const left = sent.leasedUntil.getTime() - now.getTime();
    if (left > this.config.webhookTimeoutMs + LEASE_MARGIN_MS / 2) return leased;
    sent.leasedUntil = this.leaseEnd(now);
    return this.deliveries.renewLease(id, this.owner, sent.leasedUntil);
  }

  /**
   * One attempt of `event` (undefined when retention deleted it), recorded and counted: whether
   * it succeeded, failed, or no more should follow (disabled, or cut off).
   */
  private async attempt(
    subscription: LeasedSubscription,
    delivery: DueDelivery,
    event: StoredPetEvent | undefined,
  ): Promise<'succeeded' | 'failed' | 'stop'> {
    const { id } = subscription;
    if (!event) {
      // Retention deleted it: no later attempt could send it either.
      await this.fail(id, delivery, {}, 'event deleted by retention', false);
      this.metrics.attempted(id, 'gave_up');
      return 'failed';
    }
    const outcome = await this.send(subscription, delivery, event);
    if (this.cutOff.signal.aborted) return 'stop';
    const now = this.clock.now();
    if (succeeded(outcome)) {
      this.metrics.attempted(id, 'success', outcome.latencyMs);
      this.metrics.delivered(event.occurredAt, now);
      return 'succeeded';
    }
    if (outcome.status === 410) {
      await this.deliveries.disable(id, 'HTTP 410: the receiver asked for no more deliveries', now);
      this.metrics.attempted(id, 'disabled', outcome.latencyMs);
      return 'stop';
    }
    const retried = await this.fail(id, delivery, outcome, failureReason(outcome, this.config));
    const failed = outcome.errorClass === 'timeout' ? 'timeout' : 'failed';
    this.metrics.attempted(id, retried ? failed : 'gave_up', outcome.latencyMs);
    return 'failed';
  }

  /**
   * Signs and POSTs the event, in a span of its own linked to the request that made the change
   * (docs/observability.md, "Traces"), whose attributes are bounded: no URL, no body.
   */
  private send(
    subscription: LeasedSubscription,
    delivery: DueDelivery,
    event: StoredPetEvent,
  ): Promise<AttemptOutcome> {
    const body = eventJson(event);
    const eventId = eventIdOf(event);
    const headers = signedHeaders(subscription, eventId, this.clock.now(), body);
    return inLinkedRootSpan(
      'send webhook',
      event.traceContext,
      {
        'animal_store.webhook.subscription_id': subscription.id,
        'animal_store.webhook.event_id': eventId,
        'animal_store.webhook.attempt': delivery.attempts + 1,
      },
      () =>
        this.sender.send(
          subscription.url,
          headers,
          body,
          this.config.webhookTimeoutMs,
          this.cutOff.signal,
        ),
      (outcome) => ({
        attributes:
          outcome.status === undefined
            ? { 'error.type': outcome.errorClass ?? 'network error' }
            : { 'http.response.status_code': outcome.status },
        failed: !succeeded(outcome),
      }),
    );
  }

  /**
   * Records a failed attempt, and when the next is due; none when `retry` is false. True when
   * another attempt will follow.
   */
  private async fail(
    id: number,
    delivery: DueDelivery,
    outcome: Omit<AttemptOutcome, 'latencyMs'>,
    reason: string,
    retry = true,
  ): Promise<boolean> {
    const now = this.clock.now();
    const attempts = delivery.attempts + 1;
    const retryAfter =
      outcome.status === undefined
        ? undefined
        : retryAfterMs(outcome.status, outcome.retryAfter, now);
    const delay = retry
      ? nextAttemptDelayMs(this.config.webhookRetryScheduleMs, attempts, retryAfter, Math.random())
      : undefined;
    await this.deliveries.recordFailure(
      id,
      delivery.event,
      {
        attempts,
        nextAttemptAt: delay === undefined ? undefined : new Date(now.getTime() + delay),
        status: outcome.status ?? null,
        error: outcome.errorClass ?? null,
        reason:
          delay === undefined ? `${reason}; given up after ${attemptsText(attempts)}` : reason,
      },
      now,
    );
    return delay !== undefined;
  }

  /** When a newly owed delivery is first attempted: the schedule's first delay from now. */
  private firstAttemptAt(): Date {
    const schedule = this.config.webhookRetryScheduleMs;
    const delay = nextAttemptDelayMs(schedule, 0, undefined, Math.random())!;
    return new Date(this.clock.now().getTime() + delay);
  }

  private leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.config.webhookTimeoutMs + LEASE_MARGIN_MS);
  }
}

/**
 * What one subscription's sending knows: when its lease ends, the deliveries that succeeded and
 * are not yet recorded, and the latest success.
 */
interface SendingState {
  leasedUntil: Date;
  delivered: EventPosition[];
  lastSuccessAt?: Date;
}

function succeeded(outcome: AttemptOutcome): boolean {
  return outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? '1 attempt' : `${attempts} attempts`;
}

/** What a client reads in lastFailureReason: the status, or what went wrong before one. */
function failureReason(outcome: AttemptOutcome, config: AppConfig): string {
  if (outcome.status !== undefined) return `HTTP ${outcome.status}`;
  if (outcome.errorClass === 'timeout')
    return `timeout: no answer within ${config.webhookTimeoutMs} ms`;
  return outcome.errorClass ?? 'network error';
}
