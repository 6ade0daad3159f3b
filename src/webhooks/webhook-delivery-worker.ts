import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { RequestsInFlight } from '../http/requests-in-flight.js';
import { eventIdOf, type EventPosition } from '../events/event-position.js';
import { eventJson } from '../events/event-json.js';
import { PetEventsRepository, type StoredPetEvent } from '../events/pet-events.repository.js';
import { inLinkedRootSpan, untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import { ThrottledTask } from '../time/throttled-task.js';
import { pauseAfterBatch } from './delivery-pacing.js';
import { nextAttemptDelayMs, retryAfterMs } from './retry-schedule.js';
import {
  type DeliveryBatch,
  type DueDelivery,
  type FailedAttempt,
  type LeasedForBatch,
  type LeasedSubscription,
  WebhookDeliveriesRepository,
} from './webhook-deliveries.repository.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { SUBSCRIPTION_READ_HOLDS_MS } from './webhook-subscription.js';
import { NO_PUBLIC_ADDRESS } from './webhook-target-refused.error.js';
import { type AttemptOutcome, WebhookSender } from './webhook-sender.js';
import { type DeliverySigner, deliverySigner } from './webhook-signature.js';

/**
 * Looks for owed and due deliveries this often even without a commit to wake it, and for whether
 * the store has an enabled webhook at all.
 */
const POLL_MS = 1_000;
/**
 * At most one pass per this many milliseconds: each pass reads and writes the database, so under
 * a stream of commits one pass per commit would cost every write its own (docs/performance.md).
 */
const MIN_PASS_INTERVAL_MS = 50;
/**
 * New events and failed deliveries due, each, attempted per batch for one subscription; a batch is
 * recorded at once, so a crash sends at most a batch again.
 */
const BATCH = 20;
/** Subscriptions this instance sends for at once: a slow receiver holds up only its own. */
const MAX_SUBSCRIPTIONS_AT_ONCE = 8;
/**
 * How long a webhook whose receiver could not be reached is left alone: a receiver that is down
 * costs at most one attempt per this long, however fast commits come.
 */
const UNREACHABLE_PAUSE_MS = 1_000;
/**
 * The failures that say the receiver cannot be reached now (webhook-sender.ts's error classes).
 * A reset is not one: a connection can be closed under a request to a receiver that is up, and
 * the next pass tries again.
 */
const UNREACHABLE = new Set(['connection refused', 'timeout', NO_PUBLIC_ADDRESS, 'target_refused']);
/** A lease outlasts the attempt it is extended for by this much, for the writes around it. */
const LEASE_MARGIN_MS = 10_000;
/**
 * How long SIGTERM waits for the attempts in flight before cutting them off: well inside the
 * process's 10 s to stop (docs/api-design.md, "Operations").
 */
const SHUTDOWN_WAIT_MS = 5_000;

/**
 * Sends the webhooks (docs/events.md, "How deliveries are owed and sent"), in every instance. A
 * pass leases subscriptions with events after their cursor or failed deliveries due, and sends
 * each one's in event order, one at a time, in batches: first the failed deliveries due again,
 * then the new events after the cursor. Each batch is recorded at once (one statement or one
 * transaction): the cursor moved past the new events, a row for each delivery that failed,
 * retries' outcomes. The lease, and that the subscription is still there and enabled, are read
 * before every batch, and again before an attempt once the last read is SUBSCRIPTION_READ_HOLDS_MS
 * old; the lease always outlasts the attempt under way. So two instances never send for one
 * subscription at once, and none sends after a delete has answered but the attempt under way.
 * Commits in this process, commits anywhere (ChangeNotifications) and a timer wake it; everything
 * it knows is in the database.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDeliveryWorker');
  /** Names this instance's leases: `lease_owner` of the subscriptions it holds. */
  readonly owner = randomUUID();
  private readonly sending = new Map<number, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private readonly passes = new ThrottledTask(MIN_PASS_INTERVAL_MS, () =>
    untraced(() => this.pass()),
  );
  private stopping = false;
  /**
   * Whether the store had an enabled webhook at the last look: commits wake the worker only then,
   * so a store without webhooks pays no pass for its changes (docs/performance.md), from its
   * start on. None is assumed before the first look, which bootstrap starts and which wakes a
   * pass itself when it finds one.
   */
  private subscribed = false;
  /** Webhooks created here so far: a look that began before one was created cannot deny it. */
  private createdHere = 0;
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
    private readonly requestsInFlight: RequestsInFlight,
  ) {}

  onApplicationBootstrap(): void {
    const wakeIfSubscribed = () => {
      if (this.subscribed) this.wake();
    };
    this.events.onCommitted(wakeIfSubscribed);
    this.notifications.listen(wakeIfSubscribed);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
    void this.poll();
  }

  /** A webhook was created here: its deliveries start with the next commit, not the next poll. */
  subscriptionCreated(): void {
    this.createdHere += 1;
    this.subscribed = true;
  }

  /**
   * SIGTERM: claims nothing more, lets the attempts in flight end for up to 5 s, cuts off those
   * still waiting for an answer (unrecorded: they stay due, and may arrive twice), and releases
   * the leases, so another instance takes over at once.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    const waited = setTimeout(() => this.cutOff.abort(), SHUTDOWN_WAIT_MS);
    await this.settled();
    clearTimeout(waited);
  }

  /** Settles when the pass and the sending under way have ended; later ones are not waited for. */
  async settled(): Promise<void> {
    await Promise.all([this.passes.settled(), ...this.sending.values()]);
  }

  /** Runs a pass, or another after the one running, at most one per MIN_PASS_INTERVAL_MS. */
  wake(): void {
    if (!this.stopping) this.passes.request();
  }

  /**
   * The timer's look: whether the store has an enabled webhook (one created on another instance
   * is seen here within POLL_MS), then a pass if it has.
   */
  private async poll(): Promise<void> {
    const createdBefore = this.createdHere;
    let subscribed = true;
    try {
      subscribed = await untraced(() => this.deliveries.hasEnabledSubscription());
    } catch {
      // The pass finds out what is wrong, and says so.
    }
    this.subscribed = subscribed || this.createdHere !== createdBefore;
    if (this.subscribed) this.wake();
  }

  private async pass(): Promise<void> {
    try {
      await this.claimAndSend();
    } catch (error) {
      // The next wake tries again: what is owed is in the database.
      this.logger.warn(`webhook pass failed: ${(error as Error).message}`);
    }
  }

  private async claimAndSend(): Promise<void> {
    const free = MAX_SUBSCRIPTIONS_AT_ONCE - this.sending.size;
    if (free <= 0 || this.stopping) return;
    const now = this.clock.now();
    const leasedUntil = this.leaseEnd(now);
    const firstDueBy = this.firstAttemptsDueBy(now);
    const claimed = await this.deliveries.claimDue(now, firstDueBy, leasedUntil, this.owner, free);
    for (const id of claimed) {
      // The lease is released before this settles: a later pass may have claimed it again.
      const sending: Promise<void> = this.sendDue(id, leasedUntil).finally(() => {
        if (this.sending.get(id) === sending) this.sending.delete(id);
      });
      this.sending.set(id, sending);
    }
  }

  /**
   * Sends the subscription's batches while they come full, then lets go: a batch that is not
   * full took all that was due, and what commits after it waits for the next pass, which commits
   * wake, instead of a batch of its own a few events long (docs/events.md, "How deliveries are
   * owed and sent"). `leasedUntil`: when the lease claimed for it ends. A batch cut short
   * (SIGTERM, a 410, an error) is recorded as far as it got, before the lease is let go; one whose
   * receiver could not be reached lets it go for UNREACHABLE_PAUSE_MS. While clients queue on
   * this instance, each full batch is followed by a pause (delivery-pacing.ts).
   */
  private async sendDue(id: number, leasedUntil: Date): Promise<void> {
    const sending: SendingState = { leasedUntil, readAt: performance.now() };
    let caughtUp = false;
    let unreachable = false;
    try {
      for (;;) {
        const startedAt = performance.now();
        sending.readAt = startedAt;
        const leased = await this.deliveries.findLeased(id, this.owner, this.clock.now());
        if (!leased || this.stopping) return;
        const work = await this.findWork(leased);
        if (work.due.length === 0 && work.page.length === 0) return;
        sending.batch = emptyBatch(leased.after);
        const stopped = await this.sendBatch(leased, work, sending);
        unreachable = UNREACHABLE.has(sending.batch.unanswered ?? '');
        if (!(await this.record(id, sending)) || stopped) return;
        caughtUp = work.due.length < BATCH && work.page.length < BATCH;
        if (caughtUp) return;
        const pause = pauseAfterBatch(
          performance.now() - startedAt,
          this.requestsInFlight.queueLately(),
        );
        if (pause > 0) await sleep(pause);
      }
    } catch (error) {
      this.logger.warn(`webhook ${id}: deliveries not sent: ${(error as Error).message}`);
    } finally {
      await this.record(id, sending).catch(() => {});
      const now = this.clock.now().getTime();
      const takenBackAt = new Date(unreachable ? now + UNREACHABLE_PAUSE_MS : now);
      await this.deliveries.releaseLease(id, this.owner, takenBackAt).catch(() => {});
      // A pass that a commit woke while the lease was held passed this webhook by.
      if (caughtUp) this.wake();
    }
  }

  /**
   * The failed deliveries due again, with their events, and the events after the cursor whose
   * first attempt is due: the schedule's first delay after their commit (none by default).
   */
  private async findWork(leased: LeasedForBatch): Promise<BatchWork> {
    const now = this.clock.now();
    const due = leased.retriesDue ? await this.deliveries.findDue(leased.id, now, BATCH) : [];
    const events = await this.events.findAllAt(due.map((delivery) => delivery.event));
    const page = await this.events.findPageOnPrimary(leased.after, BATCH);
    const firstDueBy = this.firstAttemptsDueBy(now);
    const notDue = page.findIndex((event) => event.occurredAt > firstDueBy);
    return {
      due,
      eventAt: new Map(events.map((event) => [eventIdOf(event), event])),
      page: notDue === -1 ? page : page.slice(0, notDue),
    };
  }

  /**
   * Attempts the batch's retries, then its new events (those of the subscription's types; the
   * cursor moves past the others too), into `sending.batch`. True when no more should follow:
   * the lease is lost, the webhook was deleted or disabled, the process stops, the receiver
   * answered 410, or it gave no answer at all (refused, reset, timed out, no public address):
   * then the rest waits, and a receiver that cannot be reached is left alone for
   * UNREACHABLE_PAUSE_MS, so one that is down costs an attempt a second, not one per event
   * (docs/events.md, "How deliveries are owed and sent").
   */
  private async sendBatch(
    leased: LeasedSubscription,
    { due, eventAt, page }: BatchWork,
    sending: SendingState,
  ): Promise<boolean> {
    const batch = sending.batch!;
    const sign = deliverySigner(leased);
    let current: LeasedSubscription | undefined = leased;
    const attempt = async (position: EventPosition, attempts: number, event?: StoredPetEvent) => {
      current = this.stopping ? undefined : await this.holdLease(sending, current!);
      if (!current) return 'stop';
      return this.attempt(current, sign, { event: position, attempts }, event, batch);
    };
    for (const delivery of due) {
      const event = eventAt.get(eventIdOf(delivery.event));
      const outcome = await attempt(delivery.event, delivery.attempts, event);
      if (outcome === 'stop') return true;
      if (outcome === 'succeeded') batch.retriesSucceeded.push(delivery.event);
      else batch.retriesFailed.push(outcome);
      if (batch.unanswered) return true;
    }
    for (const event of page) {
      if (leased.eventTypes?.includes(event.type) ?? true) {
        const outcome = await attempt(event, 0, event);
        if (outcome === 'stop') return true;
        if (outcome !== 'succeeded') batch.firstFailures.push(outcome);
      }
      batch.to = event;
      if (batch.unanswered) return true;
    }
    return false;
  }

  /** Records the batch in `sending`, if any, and forgets it: false when it could not be. */
  private async record(id: number, sending: SendingState): Promise<boolean> {
    const { batch } = sending;
    if (!batch) return true;
    sending.batch = undefined;
    const recorded = await this.deliveries.recordBatch(id, this.owner, batch, this.clock.now());
    if (recorded && batch.gone) await this.deliveries.disable(id, batch.gone.reason, batch.gone.at);
    return recorded;
  }

  /**
   * The subscription for the next attempt, or undefined when it was deleted or disabled or the
   * lease is no longer ours: as read at the start of its batch (its secrets), read again (a key
   * lookup) when the last read began SUBSCRIPTION_READ_HOLDS_MS ago or more, so once a delete has
   * answered nothing is sent after the attempt under way, whichever instance sends
   * (docs/events.md, "How deliveries are owed and sent"). When less than an attempt and half the
   * margin of the lease is left, it is read again as the lease is extended, so an attempt always
   * ends inside its lease.
   */
  private async holdLease(
    sending: SendingState,
    leased: LeasedSubscription,
  ): Promise<LeasedSubscription | undefined> {
    const now = this.clock.now();
    const left = sending.leasedUntil.getTime() - now.getTime();
    if (left <= this.config.webhookTimeoutMs + LEASE_MARGIN_MS / 2) {
      sending.readAt = performance.now();
      sending.leasedUntil = this.leaseEnd(now);
      return this.deliveries.renewLease(leased.id, this.owner, sending.leasedUntil);
    }
    if (performance.now() - sending.readAt < SUBSCRIPTION_READ_HOLDS_MS) return leased;
    sending.readAt = performance.now();
    return (await this.deliveries.isStillLeased(leased.id, this.owner)) ? leased : undefined;
  }

  /**
   * One attempt of `event` (undefined when retention deleted it), counted, its outcome noted in
   * `batch`: 'succeeded', the failed attempt to record, or 'stop' (cut off, or a 410, which
   * disables the subscription once the batch is recorded).
   */
  private async attempt(
    subscription: LeasedSubscription,
    sign: DeliverySigner,
    delivery: DueDelivery,
    event: StoredPetEvent | undefined,
    batch: DeliveryBatchInProgress,
  ): Promise<'succeeded' | 'stop' | FailedAttempt> {
    const { id } = subscription;
    if (!event) {
      // Retention deleted it: no later attempt could send it either.
      this.metrics.attempted(id, 'gave_up');
      return this.fail(delivery, {}, 'event deleted by retention', batch, false);
    }
    const outcome = await this.send(subscription, sign, delivery, event);
    if (this.cutOff.signal.aborted) return 'stop';
    const now = this.clock.now();
    if (succeeded(outcome)) {
      this.metrics.attempted(id, 'success', outcome.latencyMs);
      this.metrics.delivered(event.occurredAt, now);
      batch.lastSuccessAt = now;
      return 'succeeded';
    }
    if (outcome.status === 410) {
      this.metrics.attempted(id, 'disabled', outcome.latencyMs);
      batch.gone = { at: now, reason: 'HTTP 410: the receiver asked for no more deliveries' };
      return 'stop';
    }
    const failed = this.fail(delivery, outcome, failureReason(outcome, this.config), batch);
    if (outcome.errorClass !== undefined) batch.unanswered = outcome.errorClass;
    const retried = outcome.errorClass === 'timeout' ? 'timeout' : 'failed';
    this.metrics.attempted(id, failed.nextAttemptAt ? retried : 'gave_up', outcome.latencyMs);
    return failed;
  }

  /**
   * Signs and POSTs the event, in a span of its own linked to the request that made the change
   * (docs/observability.md, "Traces"), whose attributes are bounded: no URL, no body.
   */
  private send(
    subscription: LeasedSubscription,
    sign: DeliverySigner,
    delivery: DueDelivery,
    event: StoredPetEvent,
  ): Promise<AttemptOutcome> {
    const body = eventJson(event);
    const eventId = eventIdOf(event);
    const headers = sign(eventId, this.clock.now(), body);
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
   * A failed attempt, with when the next is due (none when `retry` is false or the schedule has
   * ended), noted as the subscription's latest failure.
   */
  private fail(
    delivery: DueDelivery,
    outcome: Omit<AttemptOutcome, 'latencyMs'>,
    reason: string,
    batch: DeliveryBatchInProgress,
    retry = true,
  ): FailedAttempt {
    const now = this.clock.now();
    const attempts = delivery.attempts + 1;
    const retryAfter =
      outcome.status === undefined
        ? undefined
        : retryAfterMs(outcome.status, outcome.retryAfter, now);
    const delay = retry
      ? nextAttemptDelayMs(this.config.webhookRetryScheduleMs, attempts, retryAfter, Math.random())
      : undefined;
    batch.lastFailure = {
      at: now,
      reason: delay === undefined ? `${reason}; given up after ${attemptsText(attempts)}` : reason,
    };
    return {
      event: delivery.event,
      attempts,
      nextAttemptAt: delay === undefined ? undefined : new Date(now.getTime() + delay),
      status: outcome.status ?? null,
      error: outcome.errorClass ?? null,
    };
  }

  /**
   * The latest commit time of an event whose first attempt is due at `now`: the schedule's first
   * delay earlier, without jitter (docs/events.md, "How deliveries are owed and sent").
   */
  private firstAttemptsDueBy(now: Date): Date {
    return new Date(now.getTime() - this.config.webhookRetryScheduleMs[0]);
  }

  private leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.config.webhookTimeoutMs + LEASE_MARGIN_MS);
  }
}

/** A batch being sent: DeliveryBatch, and the 410 that will disable the subscription. */
interface DeliveryBatchInProgress extends DeliveryBatch {
  gone?: { at: Date; reason: string };
  /** Why an attempt of the batch got no HTTP answer from the receiver: its error class. */
  unanswered?: string;
}

/**
 * What one subscription's sending knows: when its lease ends, when its last read of the
 * subscription began (performance.now(): a delete's wait is measured in the same real time), and
 * the batch not yet recorded.
 */
interface SendingState {
  leasedUntil: Date;
  readAt: number;
  batch?: DeliveryBatchInProgress;
}

/** What a batch will attempt: failed deliveries due again and their events, and new events. */
interface BatchWork {
  due: DueDelivery[];
  eventAt: Map<string, StoredPetEvent>;
  page: StoredPetEvent[];
}

function emptyBatch(after: EventPosition): DeliveryBatchInProgress {
  return { from: after, to: after, firstFailures: [], retriesSucceeded: [], retriesFailed: [] };
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
