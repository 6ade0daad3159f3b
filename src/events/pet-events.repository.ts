import { Injectable, Optional } from '@nestjs/common';
import { ChangeNotifications } from '../database/change-notifications.js';
import { Metrics } from '../metrics/metrics.js';
import { LIMIT_PARAMETER, type Row, SqlRunner, type Statement } from '../database/sql-runner.js';
import { eventOrder } from './event-order.js';
import type { EventPosition } from './event-position.js';
import type { EventType } from './pet-event.js';

/**
 * An event as stored: its position, and as JSON text what changed (a pet, a category or an order: the type
 * says which) and its previous values.
 */
export interface StoredPetEvent extends EventPosition {
  type: EventType;
  occurredAt: Date;
  pet: string;
  previous: string | null;
  /** The W3C traceparent of the request that made the change, when it was traced. */
  traceContext: string | null;
}

interface PositionParameters {
  tx: string;
  seq: string;
}

function statements(db: SqlRunner) {
  const order = eventOrder(db);
  const after = order.after(':tx', ':seq');
  const before = order.before(':tx', ':seq');
  return {
    pageAfter: db.statement<PositionParameters & { limit: number }>(
      `SELECT e.tx, e.seq, e.type, e.occurred_at, e.pet, e.previous, e.trace_context
      FROM pet_events e
      WHERE ${after} AND ${order.committed} ORDER BY ${order.ascending} ${LIMIT_PARAMETER}`,
    ),
    purged: db.statement<object>('SELECT p.tx, p.seq FROM pet_events_purged p'),
    newest: db.statement<object>(
      `SELECT e.tx, e.seq FROM pet_events e WHERE ${order.committed}
      ORDER BY ${order.descending} LIMIT 1`,
    ),
    lockPurged: db.lockingStatement<object>('SELECT p.tx, p.seq FROM pet_events_purged p'),
    // Retention keeps everything from the first event still young enough, or not yet below the
    // commit horizon (a later commit may still land before it), in feed order.
    firstKept: db.statement<{ cutoff: string }>(
      `SELECT e.tx, e.seq FROM pet_events e WHERE e.occurred_at >= :cutoff OR NOT (${order.committed})
      ORDER BY ${order.ascending} LIMIT 1`,
    ),
    newestOfAll: db.statement<object>(
      `SELECT e.tx, e.seq FROM pet_events e ORDER BY ${order.descending} LIMIT 1`,
    ),
    newestBefore: db.statement<PositionParameters>(
      `SELECT e.tx, e.seq FROM pet_events e WHERE ${before}
      ORDER BY ${order.descending} LIMIT 1`,
    ),
    deleteBefore: db.statement<PositionParameters>(
      `DELETE FROM pet_events WHERE ${before.replaceAll('e.', '')}`,
    ),
    setPurged: db.statement<PositionParameters>(
      'UPDATE pet_events_purged SET tx = :tx, seq = :seq',
    ),
  };
}

/**
 * Reads the change log and applies retention: all SQL on `pet_events` but its inserts, which the
 * changes that write them make (pets.repository.ts), and all on `pet_events_purged`.
 */
@Injectable()
export class PetEventsRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly order: ReturnType<typeof eventOrder>;
  private readonly committedListeners: (() => void)[] = [];
  /** findAllAt's SELECT of n positions, by n. */
  private readonly atPositions = new Map<number, Statement<Record<string, string>>>();

  constructor(
    private readonly db: SqlRunner,
    private readonly notifications: ChangeNotifications,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.sql = statements(db);
    this.order = eventOrder(db);
  }

  /**
   * Whether this engine could have given an event `position`: on SQLite `tx` is always 0, on
   * PostgreSQL a transaction id (docs/events.md, "Order"). Its SQL ignores or orders by parts
   * that an id of another form would forge.
   */
  issues(position: EventPosition): boolean {
    return this.order.issues(position);
  }

  /**
   * Tells this process and the others on the database that a change with an event of `type`
   * committed (`count` of them, for a batch of changes): counted, and event streams everywhere
   * wake without waiting for their poll (docs/events.md, "The stream").
   */
  committed(type: EventType, count = 1): void {
    this.metrics?.eventsCommitted.inc({ type }, count);
    for (const listener of this.committedListeners) listener();
    this.notifications.announce();
  }

  private atPositionsStatement(count: number): Statement<Record<string, string>> {
    let statement = this.atPositions.get(count);
    if (!statement) {
      const positions = Array.from(
        { length: count },
        (_, i) => `(e.tx = :tx${i} AND e.seq = :seq${i})`,
      ).join(' OR ');
      statement = this.db.statement<Record<string, string>>(
        `SELECT e.tx, e.seq, e.type, e.occurred_at, e.pet, e.previous, e.trace_context
        FROM pet_events e WHERE ${positions}`,
      );
      this.atPositions.set(count, statement);
    }
    return statement;
  }

  /** Calls `listener` each time a transaction of this process that wrote events commits. */
  onCommitted(listener: () => void): void {
    this.committedListeners.push(listener);
  }

  /** The newest event a reader may be served now; before every event when there is none. */
  async findNewestPosition(): Promise<EventPosition> {
    const [row] = await this.db.readStatement(this.sql.newest, {});
    return row ? positionOfRow(row) : { tx: 0n, seq: 0n };
  }

  /**
   * The same, read on the primary: a read node may lag behind it, and a position from there
   * would place a new subscription before events committed earlier (docs/events.md, "Webhooks").
   */
  async findNewestPositionOnPrimary(): Promise<EventPosition> {
    const { newest } = this.sql;
    const [row] = await this.db.writeStatement(newest, {});
    return row ? positionOfRow(row) : { tx: 0n, seq: 0n };
  }

  /** Up to `limit` events after `after`, in the one order of events. */
  async findPage(after: EventPosition, limit: number): Promise<StoredPetEvent[]> {
    const rows = await this.db.readStatement(this.sql.pageAfter, { ...asParameters(after), limit });
    return rows.map(toStoredEvent);
  }

  /**
   * The same, read on the primary: the webhook worker finds events owed there, and a read node
   * may not have them yet (docs/events.md, "How deliveries are owed and sent").
   */
  async findPageOnPrimary(after: EventPosition, limit: number): Promise<StoredPetEvent[]> {
    const { pageAfter } = this.sql;
    const rows = await this.db.writeStatement(pageAfter, { ...asParameters(after), limit });
    return rows.map(toStoredEvent);
  }

  /**
   * The events at `positions` that still exist, in no particular order: one query for a batch of
   * webhook deliveries. Read on the primary, where every position a reader was served exists;
   * one missing there was deleted by retention.
   */
  async findAllAt(positions: EventPosition[]): Promise<StoredPetEvent[]> {
    if (positions.length === 0) return [];
    const statement = this.atPositionsStatement(positions.length);
    const parameters: Record<string, string> = {};
    positions.forEach(({ tx, seq }, i) => {
      parameters[`tx${i}`] = tx.toString();
      parameters[`seq${i}`] = seq.toString();
    });
    const rows = await this.db.writeStatement(statement, parameters);
    return rows.map(toStoredEvent);
  }

  /** The newest position retention deleted; (0, 0) before it ever did. */
  async findPurgedThrough(): Promise<EventPosition> {
    const [row] = await this.db.readStatement(this.sql.purged, {});
    return positionOfRow(row);
  }

  /**
   * Deletes the events before the first one that occurred at or after `cutoff`, but never the
   * newest event, so positions never go back; remembers the newest it deleted, so a cursor before
   * it gets 410 (docs/events.md, "Retention"). The lock on that position makes concurrent sweeps
   * on several instances run one at a time.
   */
  async deleteOlderThan(cutoff: Date): Promise<void> {
    const { lockPurged, firstKept, newestOfAll, newestBefore, deleteBefore, setPurged } = this.sql;
    return this.db.transaction(async (transaction) => {
      await transaction.query(lockPurged.text, lockPurged.values({}));
      const young = await transaction.query(
        firstKept.text,
        firstKept.values({ cutoff: cutoff.toISOString() }),
      );
      const [keptFrom] = young.length
        ? young
        : await transaction.query(newestOfAll.text, newestOfAll.values({}));
      if (!keptFrom) return;
      const keep = asParameters(positionOfRow(keptFrom));
      const [deleted] = await transaction.query(newestBefore.text, newestBefore.values(keep));
      if (!deleted) return;
      await transaction.query(deleteBefore.text, deleteBefore.values(keep));
      await transaction.query(
        setPurged.text,
        setPurged.values(asParameters(positionOfRow(deleted))),
      );
    });
  }
}

/** Positions go to the driver as decimal text: a bigint column compares them as numbers. */
function asParameters({ tx, seq }: EventPosition): PositionParameters {
  return { tx: tx.toString(), seq: seq.toString() };
}

/** PostgreSQL returns bigint as text, SQLite as a number: both as exact bigints here. */
function positionOfRow(row: Row): EventPosition {
  return { tx: BigInt(String(row.tx)), seq: BigInt(String(row.seq)) };
}

function toStoredEvent(row: Row): StoredPetEvent {
  return {
    ...positionOfRow(row),
    type: row.type as EventType,
    occurredAt: new Date(row.occurred_at as Date | string),
    pet: row.pet as string,
    previous: row.previous as string | null,
    traceContext: row.trace_context as string | null,
  };
}
