import { Injectable } from '@nestjs/common';
import {
  type Row,
  SqlRunner,
  type SqlTransaction,
  type Statement,
} from '../database/sql-runner.js';
import { eventOrder } from '../events/event-order.js';
import type { EventPosition } from '../events/event-position.js';
import type { EventType } from '../events/pet-event.js';
import type { SigningSecrets } from './webhook-signature.js';
import { eventTypesOfColumn, OWED_COUNTED_UP_TO } from './webhook-subscription.js';

/**
 * A subscription this instance holds the lease of: where to send, what to sign with, which events
 * it takes, and its cursor (the events after it have not been attempted yet).
 */
export interface LeasedSubscription extends SigningSecrets {
  id: number;
  url: string;
  eventTypes: EventType[] | null;
  after: EventPosition;
}

/** A leased subscription as a batch reads it: with whether it has failed deliveries due. */
export interface LeasedForBatch extends LeasedSubscription {
  retriesDue: boolean;
}

/** A failed delivery waiting for its next attempt. */
export interface DueDelivery {
  event: EventPosition;
  /** Attempts made so far. */
  attempts: number;
}

/** A failed attempt as recorded: the next attempt's time, or none when it was the last. */
export interface FailedAttempt {
  event: EventPosition;
  attempts: number;
  nextAttemptAt: Date | undefined;
  status: number | null;
  error: string | null;
}

/**
 * What a batch of attempts for one subscription came to, recorded at once: the cursor moved
 * from `from` to `to` past the new events attempted (or skipped by the filter), the first failures
 * of new events, the outcomes of retries, and the subscription's latest success and failure.
 */
export interface DeliveryBatch {
  from: EventPosition;
  to: EventPosition;
  firstFailures: FailedAttempt[];
  retriesSucceeded: EventPosition[];
  retriesFailed: FailedAttempt[];
  lastSuccessAt?: Date;
  lastFailure?: { at: Date; reason: string };
}

/**
 * What a subscription is owed now: its failed deliveries still pending and, while it is enabled,
 * the events of its types after its cursor; and the commit time of the oldest of these (null:
 * none).
 */
export interface SubscriptionBacklog {
  id: number;
  enabled: boolean;
  owed: number;
  oldestOwedAt: Date | null;
}

const LEASED_COLUMNS = `id, url, secret, previous_secret, previous_secret_expires_at, event_types,
  after_tx, after_seq`;
const FAILED_COLUMNS = `subscription_id, event_tx, event_seq, state, attempts, next_attempt_at,
  last_attempt_at, last_status, last_error`;
/** How a retry's outcome updates its delivery's row; a given-up one keeps when it was due. */
const RETRIED = `ON CONFLICT (subscription_id, event_tx, event_seq) DO UPDATE SET
  state = excluded.state, attempts = excluded.attempts,
  next_attempt_at = CASE WHEN excluded.state = 'given_up'
    THEN webhook_deliveries.next_attempt_at ELSE excluded.next_attempt_at END,
  last_attempt_at = excluded.last_attempt_at, last_status = excluded.last_status,
  last_error = excluded.last_error`;

/**
 * SQL counting the rows that pass `filter` among the first OWED_COUNTED_UP_TO rows of `rowsWhere`
 * (a FROM list, aliased `alias`, and its WHERE clause) in `order`, the order of the index they are
 * found by. The filter stays outside the LIMIT: inside, PostgreSQL estimated few matches and
 * collected the whole range before sorting it, however long (docs/events.md, "What a webhook is
 * owed").
 */
function countAmongFirst(rowsWhere: string, alias: string, order: string, filter: string): string {
  return `(SELECT COUNT(*) FROM (SELECT ${alias}.* FROM ${rowsWhere}
    ORDER BY ${order} LIMIT ${OWED_COUNTED_UP_TO}) AS ${alias} WHERE ${filter})`;
}

/** A backlog's two counts, pending failed deliveries and unsent events, as one capped count. */
export function owedOf(pending: unknown, unsent: unknown): number {
  // PostgreSQL counts in bigint, which its driver returns as text.
  return Math.min(Number(pending) + Number(unsent), OWED_COUNTED_UP_TO);
}

/** Whether event `e` is of a type subscription `s` takes (`event_types`: a JSON array, or NULL). */
const OF_ITS_TYPES = `(s.event_types IS NULL OR s.event_types LIKE '%"' || e.type || '"%')`;

/**
 * SQL over the events a subscription `s` has not been sent yet: committed, after its cursor, and,
 * when `ofItsTypes`, of the types it takes (`event_types` is a JSON array of names).
 */
export function unsentEvents(db: SqlRunner, ofItsTypes: boolean): string {
  const order = eventOrder(db);
  return `pet_events e WHERE ${order.after('s.after_tx', 's.after_seq')} AND ${order.committed}${
    ofItsTypes ? ` AND ${OF_ITS_TYPES}` : ''
  }`;
}

/** The failed deliveries of subscription `s` in `state` among its first rows (countAmongFirst). */
export function deliveriesCounted(state: 'pending' | 'given_up'): string {
  return countAmongFirst(
    'webhook_deliveries d WHERE d.subscription_id = s.id',
    'd',
    'd.event_tx, d.event_seq',
    `d.state = '${state}'`,
  );
}

/** The events of its types among the first after subscription `s`'s cursor (countAmongFirst). */
export function unsentEventsCounted(db: SqlRunner): string {
  return countAmongFirst(
    `${unsentEvents(db, false)} AND s.disabled_at IS NULL`,
    'e',
    eventOrder(db).ascending,
    OF_ITS_TYPES,
  );
}

function statements(db: SqlRunner) {
  const order = eventOrder(db);
  const due = `EXISTS (SELECT 1 FROM webhook_deliveries d
    WHERE d.subscription_id = s.id AND d.state = 'pending' AND d.next_attempt_at <= :now)`;
  // The first such event in the events' order, not EXISTS: for EXISTS, PostgreSQL expected a third
  // of the table to match and scanned it from its oldest row, so nearly all of it for every webhook
  // near the newest event, at every pass (docs/performance.md, "The lease claim").
  const unsent = `(SELECT 1 FROM ${unsentEvents(db, false)} AND e.occurred_at <= :firstDueBy
    ORDER BY ${order.ascending} LIMIT 1) IS NOT NULL`;
  return {
    // Read at each scrape (webhook-metrics.ts), per subscription: its pending deliveries and the
    // events of its types after its cursor, each counted over a bounded range of a key; and the
    // commit times of the first of each, all lookups by key.
    backlog: db.statement<object>(
      `SELECT s.id, s.disabled_at,
        ${deliveriesCounted('pending')} AS pending,
        ${unsentEventsCounted(db)} AS unsent,
        (SELECT e.occurred_at FROM webhook_deliveries d
          JOIN pet_events e ON e.tx = d.event_tx AND e.seq = d.event_seq
          WHERE d.subscription_id = s.id AND d.state = 'pending'
          ORDER BY d.event_tx, d.event_seq LIMIT 1) AS oldest_pending_at,
        (SELECT e.occurred_at FROM ${unsentEvents(db, true)} AND s.disabled_at IS NULL
          ORDER BY ${order.ascending} LIMIT 1) AS oldest_unsent_at
      FROM webhook_subscriptions s ORDER BY s.id`,
    ),
    // The webhooks let go longest ago first (never leased: first of all), so none waits behind
    // others that always have work; a released lease keeps its end as the time it was let go.
    claim: db.statement<{
      now: string;
      firstDueBy: string;
      leasedUntil: string;
      owner: string;
      limit: number;
    }>(
      `UPDATE webhook_subscriptions SET leased_until = :leasedUntil, lease_owner = :owner
      WHERE id IN (
        SELECT s.id FROM webhook_subscriptions s
        WHERE s.disabled_at IS NULL AND (s.leased_until IS NULL OR s.leased_until <= :now)
          AND (${unsent} OR ${due})
        ORDER BY s.leased_until IS NOT NULL, s.leased_until, s.id
        LIMIT :limit${db.rowLockSkippingLocked}
      ) AND (leased_until IS NULL OR leased_until <= :now)
      RETURNING id`,
    ),
    renewLease: db.statement<{ id: number; owner: string; leasedUntil: string }>(
      `UPDATE webhook_subscriptions SET leased_until = :leasedUntil
      WHERE id = :id AND lease_owner = :owner AND disabled_at IS NULL
      RETURNING ${LEASED_COLUMNS}`,
    ),
    // Before an attempt once the last read is SUBSCRIPTION_READ_HOLDS_MS old: a key lookup.
    stillLeased: db.statement<{ id: number; owner: string }>(
      `SELECT 1 AS leased FROM webhook_subscriptions
      WHERE id = :id AND lease_owner = :owner AND disabled_at IS NULL`,
    ),
    leased: db.statement<{ id: number; owner: string; now: string }>(
      `SELECT ${LEASED_COLUMNS}, ${due} AS retries_due FROM webhook_subscriptions s
      WHERE id = :id AND lease_owner = :owner AND disabled_at IS NULL`,
    ),
    anyEnabled: db.statement<object>(
      'SELECT 1 AS enabled FROM webhook_subscriptions WHERE disabled_at IS NULL LIMIT 1',
    ),
    releaseLease: db.statement<{ id: number; owner: string; takenBackAt: string }>(
      `UPDATE webhook_subscriptions SET leased_until = :takenBackAt, lease_owner = NULL
      WHERE id = :id AND lease_owner = :owner`,
    ),
    due: db.statement<{ id: number; now: string; limit: number }>(
      `SELECT d.event_tx, d.event_seq, d.attempts FROM webhook_deliveries d
      WHERE d.subscription_id = :id AND d.state = 'pending' AND d.next_attempt_at <= :now
      ORDER BY d.event_tx, d.event_seq LIMIT :limit`,
    ),
    // Moves the cursor only from where the batch read it, while the lease is still this
    // instance's (a batch sent by an instance whose lease ran out records nothing), and notes the
    // latest success and failure; COALESCE keeps what the batch did not change, and each
    // parameter takes its column's type.
    recordProgress: db.statement<{ id: number; owner: string } & CursorMove & Outcome>(
      `UPDATE webhook_subscriptions SET after_tx = :toTx, after_seq = :toSeq,
        last_success_at = COALESCE(:successAt, last_success_at),
        last_failure_at = COALESCE(:failureAt, last_failure_at),
        last_failure_reason = COALESCE(:reason, last_failure_reason)
      WHERE id = :id AND lease_owner = :owner AND after_tx = :fromTx AND after_seq = :fromSeq
        AND disabled_at IS NULL
      RETURNING id`,
    ),
    disable: db.statement<{ id: number; now: string; reason: string }>(
      `UPDATE webhook_subscriptions SET disabled_at = :now, disabled_reason = :reason,
      last_failure_at = :now, last_failure_reason = :reason, leased_until = NULL, lease_owner = NULL
      WHERE id = :id`,
    ),
  };
}

type CursorMove = Record<'fromTx' | 'fromSeq' | 'toTx' | 'toSeq', string>;

type Outcome = Record<'successAt' | 'failureAt' | 'reason', string | null>;

/**
 * The delivery worker's SQL (docs/events.md, "How deliveries are owed and sent"): subscription
 * cursors and leases, and `webhook_deliveries`, the deliveries that failed and are retried or
 * given up. Every statement runs on the primary.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly sql: ReturnType<typeof statements>;

  /** The statements that record n failed attempts, or delete n deliveries, by kind and n. */
  private readonly batchStatements = new Map<string, Statement<Record<string, unknown>>>();

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
  }

  /** Every subscription, disabled ones included, with what it is owed (SubscriptionBacklog). */
  async findBacklog(): Promise<SubscriptionBacklog[]> {
    const rows = await this.db.write(this.sql.backlog.text, []);
    return rows.map((row) => {
      const times = [row.oldest_pending_at, row.oldest_unsent_at]
        .filter((time) => time !== null)
        .map((time) => new Date(time as string | Date).getTime());
      return {
        id: Number(row.id),
        enabled: row.disabled_at === null,
        owed: owedOf(row.pending, row.unsent),
        oldestOwedAt: times.length === 0 ? null : new Date(Math.min(...times)),
      };
    });
  }

  /**
   * Leases up to `limit` subscriptions that nobody holds and that have failed deliveries due or
   * events after their cursor committed by `firstDueBy`, until `until`; their ids.
   */
  async claimDue(
    now: Date,
    firstDueBy: Date,
    until: Date,
    owner: string,
    limit: number,
  ): Promise<number[]> {
    const { claim } = this.sql;
    const rows = await this.db.writeStatement(claim, {
      now: now.toISOString(),
      firstDueBy: firstDueBy.toISOString(),
      leasedUntil: until.toISOString(),
      owner,
      limit,
    });
    return rows.map((row) => Number(row.id));
  }

  /** Extends the lease; undefined when it is no longer ours, or the subscription is gone. */
  async renewLease(
    id: number,
    owner: string,
    until: Date,
  ): Promise<LeasedSubscription | undefined> {
    const { renewLease } = this.sql;
    const [row] = await this.db.writeStatement(renewLease, {
      id,
      owner,
      leasedUntil: until.toISOString(),
    });
    return row && toLeased(row);
  }

  /**
   * The subscription while the lease is still ours (a read: the lease is not extended), and
   * whether failed deliveries are due at `now`; undefined when the lease is not ours, or the
   * subscription is disabled or gone.
   */
  async findLeased(id: number, owner: string, now: Date): Promise<LeasedForBatch | undefined> {
    const { leased } = this.sql;
    const [row] = await this.db.writeStatement(leased, { id, owner, now: now.toISOString() });
    return row && { ...toLeased(row), retriesDue: Boolean(row.retries_due) };
  }

  /**
   * Whether the subscription is still there, not disabled, and leased to `owner`: read on the
   * primary, so a delete that has committed is seen.
   */
  async isStillLeased(id: number, owner: string): Promise<boolean> {
    const rows = await this.db.writeStatement(this.sql.stillLeased, { id, owner });
    return rows.length > 0;
  }

  /** Whether the store has a webhook that is not disabled. */
  async hasEnabledSubscription(): Promise<boolean> {
    const rows = await this.db.write(this.sql.anyEnabled.text, []);
    return rows.length > 0;
  }

  /** Lets the lease go: no pass leases the webhook again before `takenBackAt`. */
  async releaseLease(id: number, owner: string, takenBackAt: Date): Promise<void> {
    const { releaseLease } = this.sql;
    await this.db.writeStatement(releaseLease, {
      id,
      owner,
      takenBackAt: takenBackAt.toISOString(),
    });
  }

  /** The subscription's failed deliveries due again at `now`, in event order. */
  async findDue(id: number, now: Date, limit: number): Promise<DueDelivery[]> {
    const { due } = this.sql;
    const rows = await this.db.writeStatement(due, { id, now: now.toISOString(), limit });
    return rows.map((row) => ({
      event: positionOf(row.event_tx, row.event_seq),
      attempts: Number(row.attempts),
    }));
  }

  /**
   * Records `batch` (DeliveryBatch), as `owner` of the lease: in one statement when every
   * attempt was a first one and succeeded, the common case, else in one transaction. False, and
   * nothing recorded, when the cursor is no longer where the batch read it or the lease is no
   * longer `owner`'s.
   */
  async recordBatch(id: number, owner: string, batch: DeliveryBatch, now: Date): Promise<boolean> {
    const { firstFailures, retriesSucceeded, retriesFailed } = batch;
    if (firstFailures.length + retriesSucceeded.length + retriesFailed.length === 0)
      return (await this.db.write(...this.progress(id, owner, batch))).length > 0;
    return this.db.transaction(async (transaction) => {
      const moved = await transaction.query(...this.progress(id, owner, batch));
      if (moved.length === 0) return false;
      await this.recordFailures(transaction, 'first', id, firstFailures, now);
      await this.recordFailures(transaction, 'retry', id, retriesFailed, now);
      await this.deleteDelivered(transaction, id, retriesSucceeded);
      return true;
    });
  }

  /** The receiver answered 410: nothing more is sent to it; what it was owed stays as it is. */
  async disable(id: number, reason: string, now: Date): Promise<void> {
    const { disable } = this.sql;
    await this.db.writeStatement(disable, { id, reason, now: now.toISOString() });
  }

  /** The statement that moves the cursor (or, when it stays, checks the lease) and notes outcomes. */
  private progress(
    id: number,
    owner: string,
    { from, to, lastSuccessAt, lastFailure }: DeliveryBatch,
  ): [string, unknown[]] {
    const { recordProgress } = this.sql;
    const [fromTx, fromSeq, toTx, toSeq] = [from.tx, from.seq, to.tx, to.seq].map(String);
    return [
      recordProgress.text,
      recordProgress.values({
        id,
        owner,
        fromTx,
        fromSeq,
        toTx,
        toSeq,
        successAt: lastSuccessAt?.toISOString() ?? null,
        failureAt: lastFailure?.at.toISOString() ?? null,
        reason: lastFailure?.reason ?? null,
      }),
    ];
  }

  /**
   * One statement for all the batch's failed attempts of a kind: a first failure adds its
   * delivery's row (none exists: the cursor moves with it), a retry's updates the row it was
   * read from. A given-up delivery keeps the time it was last due.
   */
  private async recordFailures(
    transaction: SqlTransaction,
    kind: 'first' | 'retry',
    id: number,
    failures: FailedAttempt[],
    now: Date,
  ): Promise<void> {
    if (failures.length === 0) return;
    const values: Record<string, unknown> = { id, now: now.toISOString() };
    failures.forEach((failure, i) => {
      values[`tx${i}`] = failure.event.tx.toString();
      values[`seq${i}`] = failure.event.seq.toString();
      values[`state${i}`] = failure.nextAttemptAt ? 'pending' : 'given_up';
      values[`attempts${i}`] = failure.attempts;
      values[`next${i}`] = (failure.nextAttemptAt ?? now).toISOString();
      values[`status${i}`] = failure.status;
      values[`error${i}`] = failure.error;
    });
    const statement = this.batchStatement(kind, failures.length, (count) => {
      const rows = Array.from(
        { length: count },
        (_, i) =>
          `(:id, :tx${i}, :seq${i}, :state${i}, :attempts${i}, :next${i}, :now, :status${i}, :error${i})`,
      ).join(', ');
      return `INSERT INTO webhook_deliveries (${FAILED_COLUMNS}) VALUES ${rows} ${
        kind === 'first' ? 'ON CONFLICT DO NOTHING' : RETRIED
      }`;
    });
    await transaction.query(statement.text, statement.values(values));
  }

  /** Deletes the rows of the retried deliveries that succeeded: one statement. */
  private async deleteDelivered(
    transaction: SqlTransaction,
    id: number,
    delivered: EventPosition[],
  ): Promise<void> {
    if (delivered.length === 0) return;
    const values: Record<string, unknown> = { id };
    delivered.forEach(({ tx, seq }, i) => {
      values[`tx${i}`] = tx.toString();
      values[`seq${i}`] = seq.toString();
    });
    const statement = this.batchStatement('delete', delivered.length, (count) => {
      const positions = Array.from(
        { length: count },
        (_, i) => `(event_tx = :tx${i} AND event_seq = :seq${i})`,
      ).join(' OR ');
      return `DELETE FROM webhook_deliveries WHERE subscription_id = :id AND (${positions})`;
    });
    await transaction.query(statement.text, statement.values(values));
  }

  /** The statement of `kind` for `count` rows, written by `sql` once and kept. */
  private batchStatement(
    kind: string,
    count: number,
    sql: (count: number) => string,
  ): Statement<Record<string, unknown>> {
    const key = `${kind} ${count}`;
    let statement = this.batchStatements.get(key);
    if (!statement) {
      statement = this.db.statement<Record<string, unknown>>(sql(count));
      this.batchStatements.set(key, statement);
    }
    return statement;
  }
}

/** PostgreSQL returns bigint as text, SQLite as a number: both as exact bigints here. */
function positionOf(tx: unknown, seq: unknown): EventPosition {
  return { tx: BigInt(String(tx)), seq: BigInt(String(seq)) };
}

function toLeased(row: Row): LeasedSubscription {
  return {
    id: Number(row.id),
    url: row.url as string,
    eventTypes: eventTypesOfColumn(row.event_types),
    after: positionOf(row.after_tx, row.after_seq),
    secret: row.secret as string,
    previousSecret: row.previous_secret as string | null,
    previousSecretExpiresAt:
      row.previous_secret_expires_at === null
        ? null
        : new Date(row.previous_secret_expires_at as string | Date),
  };
}
