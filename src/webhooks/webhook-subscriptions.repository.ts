import { Injectable } from '@nestjs/common';
import { type Row, SqlRunner } from '../database/sql-runner.js';
import type { EventPosition } from '../events/event-position.js';
import type { EventType } from '../events/pet-event.js';
import { deliveriesCounted, owedOf, unsentEventsCounted } from './webhook-deliveries.repository.js';
import {
  eventTypesColumn,
  eventTypesOfColumn,
  type WebhookSubscription,
} from './webhook-subscription.js';

export interface NewWebhookSubscription {
  url: string;
  eventTypes: EventType[] | null;
  secret: string;
  createdAt: Date;
  /** Deliveries are owed for the events after this position. */
  after: EventPosition;
}

/**
 * A subscription with its deliveries owed: the failed ones still pending, and while it is enabled
 * the events of its types not sent yet; and those given up. Each count stops at the cap
 * (docs/events.md, "What a webhook is owed").
 */
function subscriptionColumns(db: SqlRunner): string {
  return `s.id, s.url, s.event_types, s.created_at, s.disabled_at,
  s.disabled_reason, s.last_success_at, s.last_failure_at, s.last_failure_reason,
  ${deliveriesCounted('pending')} AS pending, ${unsentEventsCounted(db)} AS unsent,
  ${deliveriesCounted('given_up')} AS given_up`;
}

/** Any 64-bit constant shared by every replica: serialises webhook creates across processes. */
const CREATE_LOCK_ID = 7_413_202_612;

function statements(db: SqlRunner) {
  const columns = subscriptionColumns(db);
  return {
    insert: db.statement<{
      url: string;
      eventTypes: string | null;
      secret: string;
      createdAt: string;
      afterTx: string;
      afterSeq: string;
    }>(
      `INSERT INTO webhook_subscriptions (url, event_types, secret, created_at, after_tx, after_seq)
      VALUES (:url, :eventTypes, :secret, :createdAt, :afterTx, :afterSeq) RETURNING id`,
    ),
    count: db.statement<object>('SELECT COUNT(*) AS count FROM webhook_subscriptions'),
    // One create at a time counts and inserts: on PostgreSQL under a transaction-level advisory
    // lock, which leaves the delivery worker's writes alone; SQLite runs one write transaction at
    // a time already.
    lockForCreate:
      db.driver.options.type === 'postgres'
        ? db.statement<object>(`SELECT pg_advisory_xact_lock(${CREATE_LOCK_ID})`)
        : undefined,
    all: db.statement<object>(`SELECT ${columns} FROM webhook_subscriptions s ORDER BY s.id`),
    byId: db.statement<{ id: number }>(
      `SELECT ${columns} FROM webhook_subscriptions s WHERE s.id = :id`,
    ),
    deleteDeliveries: db.statement<{ id: number }>(
      'DELETE FROM webhook_deliveries WHERE subscription_id = :id',
    ),
    delete: db.statement<{ id: number }>(
      'DELETE FROM webhook_subscriptions WHERE id = :id RETURNING id, lease_owner',
    ),
    // The right-hand sides read the row as it was: the current secret becomes the previous one.
    rotateSecret: db.statement<{ id: number; secret: string; previousExpiresAt: string }>(
      `UPDATE webhook_subscriptions SET previous_secret = secret,
      previous_secret_expires_at = :previousExpiresAt, secret = :secret
      WHERE id = :id RETURNING id`,
    ),
  };
}

/** All SQL on `webhook_subscriptions` that the management API needs. */
@Injectable()
export class WebhookSubscriptionsRepository {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
  }

  /** Creates the subscription, unless there are `max` already; its id, or undefined. */
  create(subscription: NewWebhookSubscription, max: number): Promise<number | undefined> {
    const { lockForCreate, count, insert } = this.sql;
    return this.db.transaction(async (transaction) => {
      if (lockForCreate) await transaction.query(lockForCreate.text, []);
      const [counted] = await transaction.query(count.text, []);
      if (Number(counted.count) >= max) return undefined;
      const [row] = await transaction.query(
        insert.text,
        insert.values({
          url: subscription.url,
          eventTypes: eventTypesColumn(subscription.eventTypes),
          secret: subscription.secret,
          createdAt: subscription.createdAt.toISOString(),
          afterTx: subscription.after.tx.toString(),
          afterSeq: subscription.after.seq.toString(),
        }),
      );
      return Number(row.id);
    });
  }

  /** Every subscription, oldest first. On the primary: a client reads what it just wrote. */
  async findAll(): Promise<WebhookSubscription[]> {
    return (await this.db.writeStatement(this.sql.all, {})).map(toSubscription);
  }

  async findById(id: number): Promise<WebhookSubscription | null> {
    const [row] = await this.db.writeStatement(this.sql.byId, { id });
    return row ? toSubscription(row) : null;
  }

  /**
   * Deletes the subscription and the deliveries it was owed, once committed; undefined when there
   * was none, else whether a delivery worker held its lease (it may be sending to it).
   */
  delete(id: number): Promise<{ leased: boolean } | undefined> {
    const { deleteDeliveries, delete: deleteSubscription } = this.sql;
    return this.db.transaction(async (transaction) => {
      await transaction.query(deleteDeliveries.text, deleteDeliveries.values({ id }));
      const [deleted] = await transaction.query(
        deleteSubscription.text,
        deleteSubscription.values({ id }),
      );
      return deleted && { leased: deleted.lease_owner !== null };
    });
  }

  /**
   * Makes `secret` the subscription's signing secret, and its current one the previous secret,
   * which signs too until `previousExpiresAt`; false when there is no such subscription.
   */
  async rotateSecret(id: number, secret: string, previousExpiresAt: Date): Promise<boolean> {
    const { rotateSecret } = this.sql;
    const rows = await this.db.writeStatement(rotateSecret, {
      id,
      secret,
      previousExpiresAt: previousExpiresAt.toISOString(),
    });
    return rows.length > 0;
  }
}

function toSubscription(row: Row): WebhookSubscription {
  return {
    id: Number(row.id),
    url: row.url as string,
    eventTypes: eventTypesOfColumn(row.event_types),
    createdAt: new Date(row.created_at as string | Date),
    disabledAt: optionalDate(row.disabled_at),
    disabledReason: row.disabled_reason as string | null,
    lastSuccessAt: optionalDate(row.last_success_at),
    lastFailureAt: optionalDate(row.last_failure_at),
    lastFailureReason: row.last_failure_reason as string | null,
    pendingDeliveries: owedOf(row.pending, row.unsent),
    // PostgreSQL counts in bigint, which its driver returns as text.
    givenUpDeliveries: Number(row.given_up),
  };
}

function optionalDate(value: unknown): Date | null {
  return value === null ? null : new Date(value as string | Date);
}
