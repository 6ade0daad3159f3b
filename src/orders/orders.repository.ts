import { Injectable } from '@nestjs/common';
import {
  LIMIT_PARAMETER,
  type Row,
  SqlRunner,
  type SqlTransaction,
  type Statement,
} from '../database/sql-runner.js';
import { petJson } from '../events/event-json.js';
import type { EventPet, OrderEventType } from '../events/pet-event.js';
import { oneStatementChanges } from './order-change-statements.js';
import { OPEN_REVISION } from './order-entity-tag.js';
import { orderJson, orderJsonAfterId } from './order-json.js';
import type { OrderEntity } from './order.entity.js';
import type { OrderOutcome, OrderStatus } from './order-status.js';
import { SQLITE_OPEN_BY_DEADLINE, sqliteExpiryStatements } from './sqlite-expiry-statements.js';

export interface OrderPageQuery {
  /** Only orders with a greater id: keyset pagination, as listPets. */
  afterId: number;
  status?: OrderStatus;
  petId?: number;
  limit: number;
}

/** An order change with the pet it left: what the events and the answer are made of. */
export interface OrderChange {
  order: OrderEntity;
  pet: EventPet;
}

/** Why an order was not placed: the pet is missing, or not available (its status then). */
export type PlaceRefusal = { refused: 'no-pet' } | { refused: 'not-available' };

/** One event as the change that commits it writes it. */
interface NewEvent {
  type: OrderEventType | 'pet.updated';
  occurredAt: string;
  petId: number;
  /** The JSON text of what changed: the Order, or the Pet. */
  subject: string;
  previous: string | null;
  traceContext: string | null;
}

/** Only one instance sweeps at a time on PostgreSQL; any 64-bit constant shared by replicas. */
const SWEEP_LOCK_ID = 7_413_202_612;

const ORDER_COLUMNS =
  'o.id, o.pet_id, o.status, o.created_at, o.expires_at, o.closed_at, o.revision';
const PET_RETURNING = 'RETURNING id, name, category_id, status';
/** An open order whose deadline has passed: it can only expire. */
const LAPSED = "status = 'open' AND expires_at <= :now";

/**
 * The statements, each written once with constant text. Where the engines differ (arrays on
 * PostgreSQL, JSON on SQLite, an advisory lock), each gets its own text.
 */
function statements(db: SqlRunner, postgres: boolean) {
  const page = (where: string, order = 'o.id') =>
    db.statement<Omit<OrderPageQuery, 'status' | 'petId'> & Partial<OrderPageQuery>>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE ${where} ORDER BY ${order} ${LIMIT_PARAMETER}`,
    );
  const expiredColumns = 'id, pet_id, status, created_at, expires_at, closed_at, revision';
  // SQLite plans a bare parameter compared with an indexed column with its bound value, preparing
  // the page anew on every run; as an expression it plans it once (docs/performance.md, "The
  // catalogue").
  const status = postgres ? 'o.status = :status' : "o.status = :status || ''";
  const petId = postgres ? 'o.pet_id = :petId' : 'o.pet_id = :petId + 0';
  const afterId = 'o.id > :afterId';
  return {
    page: page(afterId),
    // PostgreSQL's one plan for every status (docs/performance.md, "PostgreSQL's generic plans"):
    // the row value holds it to the (status, id) index, as the pets' status page.
    pageWithStatus: postgres
      ? page('o.status = :status AND (o.status, o.id) > (:status, :afterId)', 'o.status, o.id')
      : page(`${status} AND ${afterId}`),
    pageWithPet: page(`${petId} AND ${afterId}`),
    pageWithStatusAndPet: page(`${status} AND ${petId} AND ${afterId}`),
    byId: db.statement<{ id: number }>(`SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.id = :id`),
    openOfPet: db.statement<{ petId: number }>(
      `SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.pet_id = :petId AND o.status = 'open'`,
    ),
    // One statement, so the status and the hold are read at one instant: an order closing between
    // two reads would leave a pending pet that no order holds.
    petStatus: db.statement<{ petId: number }>(
      `SELECT p.status, EXISTS (SELECT 1 FROM orders o WHERE o.pet_id = p.id AND o.status = 'open')
      AS held FROM pets p WHERE p.id = :petId`,
    ),
    // The guard of "never twice": the pet changes only if it is available when the row is
    // written, which the database decides under the row's lock, not a read before it.
    holdPet: db.statement<{ petId: number }>(
      `UPDATE pets SET status = 'pending', revision = revision + 1
      WHERE id = :petId AND status = 'available' ${PET_RETURNING}`,
    ),
    insertOrder: db.statement<{ petId: number; createdAt: string; expiresAt: string }>(
      `INSERT INTO orders (pet_id, status, created_at, expires_at)
      VALUES (:petId, 'open', :createdAt, :expiresAt) RETURNING id`,
    ),
    // Completes or cancels the order only while it is open and its deadline is ahead.
    closeOrder: db.statement<{ id: number; status: OrderOutcome; now: string }>(
      `UPDATE orders SET status = :status, closed_at = :now, revision = revision + 1
      WHERE id = :id AND status = 'open' AND expires_at > :now RETURNING ${expiredColumns}`,
    ),
    expireOrder: db.statement<{ id: number; now: string }>(
      `UPDATE orders SET status = 'expired', closed_at = expires_at, revision = revision + 1
      WHERE id = :id AND ${LAPSED} RETURNING ${expiredColumns}`,
    ),
    setPetStatus: db.statement<{ petId: number; status: string }>(
      `UPDATE pets SET status = :status, revision = revision + 1 WHERE id = :petId ${PET_RETURNING}`,
    ),
    releasePets: postgres
      ? db.statement<{ petIds: number[] | string }>(
          `UPDATE pets SET status = 'available', revision = revision + 1
          WHERE id = ANY(:petIds::bigint[]) ${PET_RETURNING}`,
        )
      : db.statement<{ petIds: number[] | string }>(
          `UPDATE pets SET status = 'available', revision = revision + 1
          WHERE id IN (SELECT value FROM json_each(:petIds)) ${PET_RETURNING}`,
        ),
    // The events of a change in one statement, in the order given: the feed serves them so.
    insertEvents: postgres
      ? db.statement<{ events: string }>(
          `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
          SELECT e->>'type', (e->>'occurredAt')::timestamptz, (e->>'petId')::bigint,
            e->>'subject', e->>'previous', e->>'traceContext'
          FROM json_array_elements(:events::json) WITH ORDINALITY AS x(e, n) ORDER BY n`,
        )
      : db.statement<{ events: string }>(
          `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
          SELECT json_extract(value, '$.type'), json_extract(value, '$.occurredAt'),
            json_extract(value, '$.petId'), json_extract(value, '$.subject'),
            json_extract(value, '$.previous'), json_extract(value, '$.traceContext')
          FROM json_each(:events) ORDER BY key`,
        ),
    sweepLock: postgres
      ? db.statement<object>(`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK_ID}) AS locked`)
      : undefined,
    countOpen: db.statement<object>("SELECT count(*) AS open FROM orders WHERE status = 'open'"),
    oldestLapsed: db.statement<{ now: string }>(
      `SELECT min(expires_at) AS oldest FROM ${postgres ? 'orders' : SQLITE_OPEN_BY_DEADLINE}
      WHERE ${LAPSED}`,
    ),
    ...oneStatementChanges(db),
    sqliteExpiry: postgres ? undefined : sqliteExpiryStatements(db),
  };
}

/** Thrown inside a transaction to roll it back with the reason the order was refused. */
class Refused extends Error {
  constructor(readonly refusal: PlaceRefusal) {
    super(refusal.refused);
  }
}

/**
 * All SQL on `orders`, and the changes of `pets` and `pet_events` an order's change makes: the
 * order, its pet and both events in one transaction (docs/api-design.md, "Orders").
 */
@Injectable()
export class OrdersRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly postgres: boolean;

  constructor(private readonly db: SqlRunner) {
    this.postgres = db.driver.options.type === 'postgres';
    this.sql = statements(db, this.postgres);
  }

  async findPage({ afterId, status, petId, limit }: OrderPageQuery): Promise<OrderEntity[]> {
    const { page, pageWithStatus, pageWithPet, pageWithStatusAndPet } = this.sql;
    const statement =
      status === undefined
        ? petId === undefined
          ? page
          : pageWithPet
        : petId === undefined
          ? pageWithStatus
          : pageWithStatusAndPet;
    const rows = await this.db.readStatement(statement, { afterId, status, petId, limit });
    return rows.map(toOrderEntity);
  }

  async findById(id: number): Promise<OrderEntity | null> {
    const [row] = await this.db.readStatement(this.sql.byId, { id });
    return row ? toOrderEntity(row) : null;
  }

  /** The order as the primary has it: a change decided on it must not start from a replica's lag. */
  async findLatestById(id: number): Promise<OrderEntity | null> {
    const [row] = await this.db.writeStatement(this.sql.byId, { id });
    return row ? toOrderEntity(row) : null;
  }

  /** The pet's open order, on the primary; at most one, by the orders_open_pet_idx index. */
  async findOpenOfPet(petId: number): Promise<OrderEntity | null> {
    const [row] = await this.db.writeStatement(this.sql.openOfPet, { petId });
    return row ? toOrderEntity(row) : null;
  }

  /** The same inside `transaction`. */
  async findOpenOfPetIn(transaction: SqlTransaction, petId: number): Promise<OrderEntity | null> {
    const { openOfPet } = this.sql;
    const [row] = await transaction.query(openOfPet.text, openOfPet.values({ petId }));
    return row ? toOrderEntity(row) : null;
  }

  /**
   * The pet's status on the primary and whether an open order holds it, read together; undefined
   * when there is no such pet.
   */
  async findPetStatus(
    petId: number,
  ): Promise<{ status: string | null; held: boolean } | undefined> {
    const [row] = await this.db.writeStatement(this.sql.petStatus, { petId });
    // PostgreSQL answers a boolean, SQLite 0 or 1.
    return row ? { status: row.status as string | null, held: Boolean(row.held) } : undefined;
  }

  /**
   * Holds the pet and opens the order, with order.created and pet.updated, in one transaction
   * with whatever `alsoInTransaction` writes (an Idempotency-Key's claim); the refusal, writing
   * nothing, when the pet was not available as the row was written. Without anything else to
   * write, on PostgreSQL that is one statement.
   */
  async place(
    petId: number,
    createdAt: Date,
    expiresAt: Date,
    traceContext: string | null,
    alsoInTransaction?: (transaction: SqlTransaction, change: OrderChange) => Promise<void>,
  ): Promise<OrderChange | PlaceRefusal> {
    if (this.postgres && !alsoInTransaction) {
      return this.placeInOneStatement(petId, createdAt, expiresAt, traceContext);
    }
    try {
      return await this.db.transaction(async (transaction) => {
        const { holdPet, insertOrder } = this.sql;
        const [petRow] = await transaction.query(holdPet.text, holdPet.values({ petId }));
        if (!petRow) throw new Refused({ refused: 'not-available' });
        const times = { createdAt: createdAt.toISOString(), expiresAt: expiresAt.toISOString() };
        const [row] = await transaction.query(
          insertOrder.text,
          insertOrder.values({ petId, ...times }),
        );
        const change = {
          order: openOrder(Number(row.id), petId, createdAt, expiresAt),
          pet: toEventPet(petRow),
        };
        await this.writeEvents(transaction, [change], 'order.created', createdAt, traceContext);
        await alsoInTransaction?.(transaction, change);
        return change;
      });
    } catch (error) {
      if (error instanceof Refused) return error.refusal;
      throw error;
    }
  }

  private async placeInOneStatement(
    petId: number,
    createdAt: Date,
    expiresAt: Date,
    traceContext: string | null,
  ): Promise<OrderChange | PlaceRefusal> {
    const orderAfterId = orderJsonAfterId(openOrder(0, petId, createdAt, expiresAt));
    const [row] = await this.db.writeStatement(this.sql.placeWithEvents, {
      petId,
      occurredAt: createdAt.toISOString(),
      expiresAt: expiresAt.toISOString(),
      orderAfterId,
      traceContext,
    });
    if (!row) return { refused: 'not-available' };
    return {
      order: openOrder(Number(row.order_id), petId, createdAt, expiresAt),
      pet: toEventPet(row),
    };
  }

  /**
   * Completes (the pet sold) or cancels (the pet available again) the order if it is still open
   * and `now` is before its deadline; null, writing nothing, otherwise. On PostgreSQL one
   * statement, atomic without a transaction of its own.
   */
  async close(
    id: number,
    outcome: 'completed' | 'cancelled',
    now: Date,
    traceContext: string | null,
  ): Promise<OrderChange | null> {
    const petStatus = outcome === 'completed' ? 'sold' : 'available';
    if (this.postgres) {
      const [row] = await this.db.writeStatement(this.sql.closeWithEvents, {
        id,
        status: outcome,
        petStatus,
        occurredAt: now.toISOString(),
        traceContext,
      });
      if (!row) return null;
      const pet = { ...row, id: row.pet_id, status: row.pet_status };
      return { order: toOrderEntity(row), pet: toEventPet(pet) };
    }
    return this.db.transaction(async (transaction): Promise<OrderChange | null> => {
      const { closeOrder, setPetStatus } = this.sql;
      const values = closeOrder.values({ id, status: outcome, now: now.toISOString() });
      const [row] = await transaction.query(closeOrder.text, values);
      if (!row) return null;
      const order = toOrderEntity(row);
      const [petRow] = await transaction.query(
        setPetStatus.text,
        setPetStatus.values({ petId: order.petId, status: petStatus }),
      );
      const change = { order, pet: toEventPet(petRow) };
      await this.writeEvents(transaction, [change], `order.${outcome}`, now, traceContext);
      return change;
    });
  }

  /** Expires the order if its deadline is at or before `now`, in its own transaction. */
  expire(id: number, now: Date): Promise<OrderChange | null> {
    return this.db.transaction(async (transaction) => {
      const { expireOrder } = this.sql;
      const rows = await transaction.query(
        expireOrder.text,
        expireOrder.values({ id, now: now.toISOString() }),
      );
      const [change] = await this.release(transaction, rows.map(toOrderEntity), now);
      return change ?? null;
    });
  }

  /**
   * Expires up to `limit` lapsed orders, oldest deadline first, in one transaction with their
   * pets and events; the deadlines of those it expired. On PostgreSQL one instance at a time:
   * another instance's sweep under way makes this one expire none.
   */
  expireLapsed(now: Date, limit: number): Promise<Date[]> {
    const at = now.toISOString();
    return this.db.transaction(async (transaction) => {
      const run = <P>({ text, values }: Statement<P>, parameters: P) =>
        transaction.query(text, values(parameters));
      const { sweepLock, expireLapsedWithEvents, sqliteExpiry } = this.sql;
      if (sweepLock) {
        const [lock] = await run(sweepLock, {});
        if (!lock.locked) return [];
        const expired = { limit, occurredAt: at, traceContext: null };
        const rows = await run(expireLapsedWithEvents, expired);
        return rows.map((row) => row.expires_at as Date);
      }
      const { expire, releasePets, insertEvents } = sqliteExpiry!;
      const rows = await run(expire, { now: at, limit });
      if (rows.length === 0) return [];
      // JSON text for json_each.
      const ids = (column: string) => JSON.stringify(rows.map((row) => row[column]));
      await run(releasePets, { petIds: ids('pet_id') });
      await run(insertEvents, { orderIds: ids('id'), occurredAt: at });
      return rows.map((row) => new Date(row.expires_at as string));
    });
  }

  /** How many orders are open, and the oldest deadline already passed (null when none has). */
  async holds(now: Date): Promise<{ open: number; oldestLapsed: Date | null }> {
    const [[count], oldestLapsed] = await Promise.all([
      this.db.writeStatement(this.sql.countOpen, {}),
      this.findOldestLapsed(now),
    ]);
    return { open: Number(count.open), oldestLapsed };
  }

  /** The earliest deadline at or before `now` of an open order; null when no hold has lapsed. */
  async findOldestLapsed(now: Date): Promise<Date | null> {
    const [row] = await this.db.writeStatement(this.sql.oldestLapsed, { now: now.toISOString() });
    const oldest = row.oldest as Date | string | null;
    return oldest === null ? null : new Date(oldest);
  }

  /** Makes the pets of `expired` orders available again and writes each pair of events. */
  private async release(
    transaction: SqlTransaction,
    expired: OrderEntity[],
    now: Date,
  ): Promise<OrderChange[]> {
    if (expired.length === 0) return [];
    const { releasePets } = this.sql;
    const ids = expired.map((order) => order.petId);
    // An array for PostgreSQL's ANY, JSON text for SQLite's json_each.
    const petIds = this.postgres ? ids : JSON.stringify(ids);
    const petRows = await transaction.query(releasePets.text, releasePets.values({ petIds }));
    const pets = new Map(petRows.map((row) => [Number(row.id), toEventPet(row)]));
    const changes = expired.map((order) => ({ order, pet: pets.get(order.petId)! }));
    await this.writeEvents(transaction, changes, 'order.expired', now, null);
    return changes;
  }

  /** Each change's order event, then its pet's pet.updated, in one statement. */
  private async writeEvents(
    transaction: SqlTransaction,
    changes: OrderChange[],
    type: OrderEventType,
    occurredAt: Date,
    traceContext: string | null,
  ): Promise<void> {
    const at = occurredAt.toISOString();
    const previous = JSON.stringify({ status: previousPetStatus(type) });
    const events: NewEvent[] = changes.flatMap(({ order, pet }) => [
      {
        type,
        occurredAt: at,
        petId: pet.id,
        subject: orderJson(order),
        previous: null,
        traceContext,
      },
      {
        type: 'pet.updated',
        occurredAt: at,
        petId: pet.id,
        subject: petJson(pet),
        previous,
        traceContext,
      },
    ]);
    const { insertEvents } = this.sql;
    await transaction.query(
      insertEvents.text,
      insertEvents.values({ events: JSON.stringify(events) }),
    );
  }
}

/** The pet's status before an order's change: available before it is held, pending while it is. */
function previousPetStatus(type: OrderEventType): string {
  return type === 'order.created' ? 'available' : 'pending';
}

/** A just-placed order: open, at its first revision. */
function openOrder(id: number, petId: number, createdAt: Date, expiresAt: Date): OrderEntity {
  return {
    id,
    petId,
    status: 'open',
    createdAt,
    expiresAt,
    closedAt: null,
    revision: OPEN_REVISION,
  };
}

/** PostgreSQL returns bigint as a string and timestamps as Dates; SQLite the ISO text stored. */
function toOrderEntity(row: Row): OrderEntity {
  const closedAt = row.closed_at as Date | string | null;
  return {
    id: Number(row.id),
    petId: Number(row.pet_id),
    status: row.status as OrderStatus,
    createdAt: new Date(row.created_at as Date | string),
    expiresAt: new Date(row.expires_at as Date | string),
    closedAt: closedAt === null ? null : new Date(closedAt),
    revision: Number(row.revision),
  };
}

function toEventPet(row: Row): EventPet {
  return {
    id: Number(row.id),
    name: row.name as string,
    categoryId: Number(row.category_id),
    status: row.status as string | null,
  };
}
