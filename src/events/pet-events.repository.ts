import { Injectable, Optional } from '@nestjs/common';
import { Metrics } from '../metrics/metrics.js';
import {
  type Row,
  SqlRunner,
  type SqlTransaction,
  type Statement,
} from '../database/sql-runner.js';
import type { EventPosition } from './event-position.js';
import type { NewPetEvent, PetEventType } from './pet-event.js';

/** An event as stored: its position, and its pet and previous values as JSON text. */
export interface StoredPetEvent extends EventPosition {
  type: PetEventType;
  occurredAt: Date;
  pet: string;
  previous: string | null;
}

interface PositionParameters {
  tx: string;
  seq: string;
}

function statements(db: SqlRunner) {
  return {
    insert: db.statement<{
      type: string;
      occurredAt: string;
      petId: number;
      pet: string;
      previous: string | null;
    }>(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous)
      VALUES (:type, :occurredAt, :petId, :pet, :previous)`,
    ),
    // Only rows of transactions that have all ended: none can appear before them later.
    pageAfter: db.statement<PositionParameters & { limit: number }>(
      `SELECT e.tx, e.seq, e.type, e.occurred_at, e.pet, e.previous FROM pet_events e
      WHERE (e.tx, e.seq) > (:tx, :seq) AND e.tx < ${db.commitHorizon}
      ORDER BY e.tx, e.seq LIMIT :limit`,
    ),
    purged: db.statement<object>('SELECT p.tx, p.seq FROM pet_events_purged p'),
    newest: db.statement<object>(
      `SELECT e.tx, e.seq FROM pet_events e WHERE e.tx < ${db.commitHorizon}
      ORDER BY e.tx DESC, e.seq DESC LIMIT 1`,
    ),
    lockPurged: db.lockingStatement<object>('SELECT p.tx, p.seq FROM pet_events_purged p'),
    newestBefore: db.statement<{ cutoff: string }>(
      `SELECT e.tx, e.seq FROM pet_events e WHERE e.occurred_at < :cutoff
      ORDER BY e.tx DESC, e.seq DESC LIMIT 1`,
    ),
    deleteThrough: db.statement<PositionParameters>(
      'DELETE FROM pet_events WHERE (tx, seq) <= (:tx, :seq)',
    ),
    setPurged: db.statement<PositionParameters>(
      'UPDATE pet_events_purged SET tx = :tx, seq = :seq',
    ),
  };
}

/** All SQL on `pet_events` and `pet_events_purged`. */
@Injectable()
export class PetEventsRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly committedListeners: (() => void)[] = [];

  constructor(
    private readonly db: SqlRunner,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.sql = statements(db);
  }

  /**
   * Records the event in the change's own transaction: it commits with the change or not at all
   * (docs/events.md, "Nothing lost").
   */
  async append(transaction: SqlTransaction, event: NewPetEvent): Promise<void> {
    const { insert } = this.sql;
    await transaction.query(
      insert.text,
      insert.values({
        type: event.type,
        occurredAt: event.occurredAt.toISOString(),
        petId: event.pet.id,
        pet: JSON.stringify(event.pet),
        previous: event.previous === undefined ? null : JSON.stringify(event.previous),
      }),
    );
    transaction.afterCommit(() => {
      this.metrics?.eventsCommitted.inc({ type: event.type });
      for (const listener of this.committedListeners) listener();
    });
  }

  /** Calls `listener` each time a transaction of this process that wrote events commits. */
  onCommitted(listener: () => void): void {
    this.committedListeners.push(listener);
  }

  /** The newest event a reader may be served now; before every event when there is none. */
  async findNewestPosition(): Promise<EventPosition> {
    const [row] = await this.read(this.sql.newest, {});
    return row ? positionOfRow(row) : { tx: 0n, seq: 0n };
  }

  /** Up to `limit` events after `after`, in the one order of events. */
  async findPage(after: EventPosition, limit: number): Promise<StoredPetEvent[]> {
    const rows = await this.read(this.sql.pageAfter, { ...asParameters(after), limit });
    return rows.map(toStoredEvent);
  }

  /** The newest position retention deleted; (0, 0) before it ever did. */
  async findPurgedThrough(): Promise<EventPosition> {
    const [row] = await this.read(this.sql.purged, {});
    return positionOfRow(row);
  }

  /**
   * Deletes every event up to the newest one that occurred before `cutoff`, and remembers where it
   * stopped, so a cursor before that gets 410 (docs/events.md, "Retention"). The lock on the
   * remembered position makes concurrent sweeps on several instances run one at a time.
   */
  async deleteOlderThan(cutoff: Date): Promise<void> {
    const { lockPurged, newestBefore, deleteThrough, setPurged } = this.sql;
    return this.db.transaction(async (transaction) => {
      await transaction.query(lockPurged.text, lockPurged.values({}));
      const [newest] = await transaction.query(
        newestBefore.text,
        newestBefore.values({ cutoff: cutoff.toISOString() }),
      );
      if (!newest) return;
      const through = asParameters(positionOfRow(newest));
      await transaction.query(deleteThrough.text, deleteThrough.values(through));
      await transaction.query(setPurged.text, setPurged.values(through));
    });
  }

  private read<P>(statement: Statement<P>, parameters: P): Promise<Row[]> {
    return this.db.read(statement.text, statement.values(parameters));
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
    type: row.type as PetEventType,
    occurredAt: new Date(row.occurred_at as Date | string),
    pet: row.pet as string,
    previous: row.previous as string | null,
  };
}
