import { Injectable } from '@nestjs/common';
import {
  type Row,
  SqlRunner,
  type SqlTransaction,
  type Statement,
} from '../database/sql-runner.js';
import type { EventPosition } from '../events/event-position.js';
import type { PetEventType } from '../events/pet-event.js';
import type { SigningSecrets } from './webhook-signature.js';
import { eventTypesOfColumn } from './webhook-subscription.js';

/** An enabled subscription and how far its deliveries have been recorded. */
export interface SubscriptionCursor {
  id: number;
  eventTypes: PetEventType[] | null;
  after: EventPosition;
}

/** A subscription this instance holds the lease of: where to send, and what to sign with. */
export interface LeasedSubscription extends SigningSecrets {
  id: number;
  url: string;
}

export interface DueDelivery {
  event: EventPosition;
  /** Attempts made so far. */
  attempts: number;
}

/** A failed attempt as recorded: the next attempt's time, or none when it was the last. */
export interface FailedAttempt {
  attempts: number;
  nextAttemptAt: Date | undefined;
  status: number | null;
  error: string | null;
  reason: string;
}

/**
 * What a subscription is owed now: its deliveries recorded and pending, and the commit time of
 * the oldest event it is owed or not yet recorded for (null: none).
 */
export interface SubscriptionBacklog {
  id: number;
  enabled: boolean;
  owed: number;
  oldestOwedAt: Date | null;
}

interface Position {
  tx: string;
  seq: string;
}

const LEASED_COLUMNS = 'id, url, secret, previous_secret, previous_secret_expires_at';
const DELIVERY = 'subscription_id = :id AND event_tx = :tx AND event_seq = :seq';

function statements(db: SqlRunner) {
  const afterCursor =
    db.driver.options.type === 'postgres'
      ? '(e.tx, e.seq) > (s.after_tx, s.after_seq)'
      : 'e.seq > s.after_seq';
  const due = `EXISTS (SELECT 1 FROM webhook_deliveries d
    WHERE d.subscription_id = s.id AND d.state = 'pending' AND d.next_attempt_at <= :now)`;
  return {
    cursors: db.statement<object>(
      `SELECT s.id, s.event_types, s.after_tx, s.after_seq FROM webhook_subscriptions s
      WHERE s.disabled_at IS NULL ORDER BY s.id`,
    ),
    // Read at each scrape (webhook-metrics.ts), per subscription: its pending deliveries, counted
    // in its range of the primary key, and the commit times of the first of them in event order
    // and of the first event after its cursor, not yet recorded; both lookups by key.
    backlog: db.statement<object>(
      `SELECT s.id, s.disabled_at,
        (SELECT COUNT(*) FROM webhook_deliveries d
          WHERE d.subscription_id = s.id AND d.state = 'pending') AS owed,
        (SELECT e.occurred_at FROM webhook_deliveries d
          JOIN pet_events e ON e.tx = d.event_tx AND e.seq = d.event_seq
          WHERE d.subscription_id = s.id AND d.state = 'pending'
          ORDER BY d.event_tx, d.event_seq LIMIT 1) AS oldest_owed_at,
        (SELECT e.occurred_at FROM pet_events e WHERE ${afterCursor}
          ORDER BY e.tx, e.seq LIMIT 1) AS oldest_unrecorded_at
      FROM webhook_subscriptions s ORDER BY s.id`,
    ),
    // Moves the cursor only from where this pass read it: of two instances recording the same
    // events, one moves it and the other records nothing.
    advanceCursor: db.statement<{ id: number } & CursorMove>(
      `UPDATE webhook_subscriptions SET after_tx = :toTx, after_seq = :toSeq
      WHERE id = :id AND after_tx = :fromTx AND after_seq = :fromSeq AND disabled_at IS NULL
      RETURNING id`,
    ),
    claim: db.statement<{ now: string; leasedUntil: string; owner: string; limit: number }>(
      `UPDATE webhook_subscriptions SET leased_until = :leasedUntil, lease_owner = :owner
      WHERE id IN (
        SELECT s.id FROM webhook_subscriptions s
        WHERE s.disabled_at IS NULL AND (s.leased_until IS NULL OR s.leased_until <= :now) AND ${due}
        ORDER BY s.id LIMIT :limit${db.rowLockSkippingLocked}
      ) AND (leased_until IS NULL OR leased_until <= :now)
      RETURNING id`,
    ),
    renewLease: db.statement<{ id: number; owner: string; leasedUntil: string }>(
      `UPDATE webhook_subscriptions SET leased_until = :leasedUntil
      WHERE id = :id AND lease_owner = :owner AND disabled_at IS NULL
      RETURNING ${LEASED_COLUMNS}`,
    ),
    leased: db.statement<{ id: number; owner: string }>(
      `SELECT ${LEASED_COLUMNS} FROM webhook_subscriptions
      WHERE id = :id AND lease_owner = :owner AND disabled_at IS NULL`,
    ),
    releaseLease: db.statement<{ id: number; owner: string }>(
      `UPDATE webhook_subscriptions SET leased_until = NULL, lease_owner = NULL
      WHERE id = :id AND lease_owner = :owner`,
    ),
    due: db.statement<{ id: number; now: string; limit: number }>(
      `SELECT d.event_tx, d.event_seq, d.attempts FROM webhook_deliveries d
      WHERE d.subscription_id = :id AND d.state = 'pending' AND d.next_attempt_at <= :now
      ORDER BY d.event_tx, d.event_seq LIMIT :limit`,
    ),
    deleteDelivery: db.statement<{ id: number } & Position>(
      `DELETE FROM webhook_deliveries WHERE ${DELIVERY}`,
    ),
    succeeded: db.statement<{ id: number; now: string }>(
      'UPDATE webhook_subscriptions SET last_success_at = :now WHERE id = :id',
    ),
    retryLater: db.statement<{ id: number } & Position & AttemptParameters>(
      `UPDATE webhook_deliveries SET attempts = :attempts, next_attempt_at = :nextAttemptAt,
      last_attempt_at = :now, last_status = :status, last_error = :error WHERE ${DELIVERY}`,
    ),
    giveUp: db.statement<{ id: number } & Position & Omit<AttemptParameters, 'nextAttemptAt'>>(
      `UPDATE webhook_deliveries SET state = 'given_up', attempts = :attempts,
      last_attempt_at = :now, last_status = :status, last_error = :error WHERE ${DELIVERY}`,
    ),
    failed: db.statement<{ id: number; now: string; reason: string }>(
      `UPDATE webhook_subscriptions SET last_failure_at = :now, last_failure_reason = :reason
      WHERE id = :id`,
    ),
    disable: db.statement<{ id: number; now: string; reason: string }>(
      `UPDATE webhook_subscriptions SET disabled_at = :now, disabled_reason = :reason,
      last_failure_at = :now, last_failure_reason = :reason, leased_until = NULL, lease_owner = NULL
      WHERE id = :id`,
    ),
  };
}

type CursorMove = Record<'fromTx' | 'fromSeq' | 'toTx' | 'toSeq', string>;

interface AttemptParameters {
  attempts: number;
  nextAttemptAt: string;
  now: string;
  status: number | null;
  error: string | null;
}

/**
 * The delivery worker's SQL (docs/events.md, "Webhooks"): subscription cursors and leases, and
 * `webhook_deliveries`, the deliveries owed. Every write runs on the primary.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly sql: ReturnType<typeof statements>;

  /** The INSERT of n owed deliveries, by n: one statement per page of events. */
  private readonly insertOwed = new Map<number, Statement<Record<string, unknown>>>();

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
  }

  async findCursors(): Promise<SubscriptionCursor[]> {
    const rows = await this.db.write(this.sql.cursors.text, []);
    return rows.map((row) => ({
      id: Number(row.id),
      eventTypes: eventTypesOfColumn(row.event_types),
      after: positionOf(row.after_tx, row.after_seq),
    }));
  }

  /** Every subscription, disabled ones included, with what it is owed (SubscriptionBacklog). */
  async findBacklog(): Promise<SubscriptionBacklog[]> {
    const rows = await this.db.write(this.sql.backlog.text, []);
    return rows.map((row) => {
      const times = [row.oldest_owed_at, row.oldest_unrecorded_at]
        .filter((time) => time !== null)
        .map((time) => new Date(time as string | Date).getTime());
      return {
        id: Number(row.id),
        enabled: row.disabled_at === null,
        owed: Number(row.owed),
        oldestOwedAt: times.length === 0 ? null : new Date(Math.min(...times)),
      };
    });
  }

  /**
   * Records a delivery owed of each of `events`, first attempted at `firstAttemptAt`, and moves
   * the cursor from `from` to `to`, in one transaction; nothing when the cursor is no longer at
   * `from` (another instance recorded them).
   */
  recordOwed(
    id: number,
    from: EventPosition,
    to: EventPosition,
    events: EventPosition[],
    firstAttemptAt: Date,
  ): Promise<boolean> {
    const { advanceCursor } = this.sql;
    return this.db.transaction(async (transaction) => {
      const [fromTx, fromSeq, toTx, toSeq] = [from.tx, from.seq, to.tx, to.seq].map(String);
      const moved = await transaction.query(
        advanceCursor.text,
        advanceCursor.values({ id, fromTx, fromSeq, toTx, toSeq }),
      );
      if (moved.length === 0) return false;
      if (events.length === 0) return true;
      const insert = this.insertOwedStatement(events.length);
      const parameters: Record<string, unknown> = { id, at: firstAttemptAt.toISOString() };
      events.forEach(({ tx, seq }, i) => {
        parameters[`tx${i}`] = tx.toString();
        parameters[`seq${i}`] = seq.toString();
      });
      await transaction.query(insert.text, insert.values(parameters));
      return true;
    });
  }

  private insertOwedStatement(count: number): Statement<Record<string, unknown>> {
    let statement = this.insertOwed.get(count);
    if (!statement) {
      const rows = Array.from(
        { length: count },
        (_, i) => `(:id, :tx${i}, :seq${i}, 'pending', 0, :at)`,
      ).join(', ');
      statement = this.db.statement<Record<string, unknown>>(
        `INSERT INTO webhook_deliveries (subscription_id, event_tx, event_seq, state, attempts, next_attempt_at)
        VALUES ${rows} ON CONFLICT DO NOTHING`,
      );
      this.insertOwed.set(count, statement);
    }
    return statement;
  }

  /**
   * Leases up to `limit` subscriptions with deliveries due, that nobody holds, until `until`;
   * their ids.
   */
  async claimDue(now: Date, until: Date, owner: string, limit: number): Promise<number[]> {
    const { claim } = this.sql;
    const rows = await this.db.write(
      claim.text,
      claim.values({
        now: now.toISOString(),
        leasedUntil: until.toISOString(),
        owner,
        limit,
      }),
    );
    return rows.map((row) => Number(row.id));
  }

  /** Extends the lease; undefined when it is no longer ours, or the subscription is gone. */
  async renewLease(
    id: number,
    owner: string,
    until: Date,
  ): Promise<LeasedSubscription | undefined> {
    const { renewLease } = this.sql;
    const [row] = await this.db.write(
      renewLease.text,
      renewLease.values({ id, owner, leasedUntil: until.toISOString() }),
    );
    return row && toLeased(row);
  }

  /**
   * The subscription while the lease is still ours (a read: the lease is not extended); undefined
   * when it is not, or the subscription is disabled or gone.
   */
  async findLeased(id: number, owner: string): Promise<LeasedSubscription | undefined> {
    const { leased } = this.sql;
    const [row] = await this.db.write(leased.text, leased.values({ id, owner }));
    return row && toLeased(row);
  }

  async releaseLease(id: number, owner: string): Promise<void> {
    const { releaseLease } = this.sql;
    await this.db.write(releaseLease.text, releaseLease.values({ id, owner }));
  }

  /** The subscription's deliveries due at `now`, in event order. */
  async findDue(id: number, now: Date, limit: number): Promise<DueDelivery[]> {
    const { due } = this.sql;
    const rows = await this.db.write(due.text, due.values({ id, now: now.toISOString(), limit }));
    return rows.map((row) => ({
      event: positionOf(row.event_tx, row.event_seq),
      attempts: Number(row.attempts),
    }));
  }

  /**
   * The deliveries of `events` are done: they are deleted, and the subscription's lastSuccessAt
   * becomes `at`, in one transaction.
   */
  recordSuccesses(id: number, events: EventPosition[], at: Date): Promise<void> {
    const { deleteDelivery, succeeded } = this.sql;
    return this.db.transaction(async (transaction) => {
      for (const event of events)
        await transaction.query(
          deleteDelivery.text,
          deleteDelivery.values({ id, ...parameters(event) }),
        );
      await transaction.query(succeeded.text, succeeded.values({ id, now: at.toISOString() }));
    });
  }

  /** The attempt failed: the delivery waits for its next attempt, or is given up. */
  recordFailure(
    id: number,
    event: EventPosition,
    attempt: FailedAttempt,
    now: Date,
  ): Promise<void> {
    return this.db.transaction(async (transaction) => {
      await this.recordAttempt(transaction, id, event, attempt, now);
      const { failed } = this.sql;
      await transaction.query(
        failed.text,
        failed.values({ id, now: now.toISOString(), reason: attempt.reason }),
      );
    });
  }

  /** The receiver answered 410: nothing more is sent to it; what it was owed stays as it is. */
  async disable(id: number, reason: string, now: Date): Promise<void> {
    const { disable } = this.sql;
    await this.db.write(disable.text, disable.values({ id, reason, now: now.toISOString() }));
  }

  private async recordAttempt(
    transaction: SqlTransaction,
    id: number,
    event: EventPosition,
    { attempts, nextAttemptAt, status, error }: FailedAttempt,
    now: Date,
  ): Promise<void> {
    const { retryLater, giveUp } = this.sql;
    const common = { id, ...parameters(event), attempts, now: now.toISOString(), status, error };
    if (nextAttemptAt === undefined) {
      await transaction.query(giveUp.text, giveUp.values(common));
      return;
    }
    await transaction.query(
      retryLater.text,
      retryLater.values({ ...common, nextAttemptAt: nextAttemptAt.toISOString() }),
    );
  }
}

function parameters({ tx, seq }: EventPosition): Position {
  return { tx: tx.toString(), seq: seq.toString() };
}

/** PostgreSQL returns bigint as text, SQLite as a number: both as exact bigints here. */
function positionOf(tx: unknown, seq: unknown): EventPosition {
  return { tx: BigInt(String(tx)), seq: BigInt(String(seq)) };
}

function toLeased(row: Row): LeasedSubscription {
  return {
    id: Number(row.id),
    url: row.url as string,
    secret: row.secret as string,
    previousSecret: row.previous_secret as string | null,
    previousSecretExpiresAt:
      row.previous_secret_expires_at === null
        ? null
        : new Date(row.previous_secret_expires_at as string | Date),
  };
}
