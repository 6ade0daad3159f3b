import { Injectable } from '@nestjs/common';
import {
  LIMIT_PARAMETER,
  type Row,
  SqlRunner,
  type SqlTransaction,
} from '../database/sql-runner.js';
import { TurnBatch } from '../database/turn-batch.js';
import { PET_JSON_BEFORE_ID, petJson, petJsonAfterId } from '../events/event-json.js';
import type { PetEventRecord } from '../events/pet-event.js';
import type { PetEntity } from './pet.entity.js';
import type { PetStatus } from './pet-status.js';

export interface PetPageQuery {
  /** Only pets with a greater id: keyset pagination, so page N costs what page 1 costs. */
  afterId: number;
  status?: PetStatus;
  categoryId?: number;
  limit: number;
}

export type NewPetRow = Omit<PetEntity, 'id' | 'revision'>;

interface NewPetWithEvent {
  pet: NewPetRow;
  event: PetEventRecord;
}

const PET_COLUMNS = 'p.id, p.name, p.category_id, p.status, p.revision';

/**
 * The statements, each written once; the runner gives each its engine's placeholders once, here,
 * so each text is constant: SQLite prepares it once and PostgreSQL caches its plan.
 */
function statements(db: SqlRunner) {
  // PostgreSQL plans each statement once for every value (docs/performance.md, "PostgreSQL's
  // generic plans"): the row value holds the page to the (status, id) index whatever the status,
  // where `p.id > :afterId` let that one plan take the primary key and filter. A status bound bare
  // made SQLite prepare the page anew on every run (categoryPageStatements says why).
  const inStatus =
    db.driver.options.type === 'postgres'
      ? 'p.status = :status AND (p.status, p.id) > (:status, :afterId) ORDER BY p.status, p.id'
      : "p.status = :status || '' AND p.id > :afterId ORDER BY p.id";
  return {
    page: db.statement<{ afterId: number; limit: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id > :afterId ORDER BY p.id ${LIMIT_PARAMETER}`,
    ),
    pageWithStatus: db.statement<{ status: PetStatus; afterId: number; limit: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE ${inStatus} ${LIMIT_PARAMETER}`,
    ),
    ...categoryPageStatements(db),
    byId: db.statement<{ id: number }>(`SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = :id`),
    lockById: db.lockingStatement<{ id: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = :id`,
    ),
    ...changeStatements(db),
    ...deleteStatements(db),
  };
}

/**
 * deletePet's statements: the pet it removes, at the revision it read. On PostgreSQL the deletion
 * and its event are one statement, as an update's are (changeStatements).
 */
function deleteStatements(db: SqlRunner) {
  return {
    delete: db.statement<{ id: number; revision: number }>(
      'DELETE FROM pets WHERE id = :id AND revision = :revision RETURNING id',
    ),
    deleteWithEvent: db.statement<EventParameters & { id: number; revision: number; pet: string }>(
      `WITH pet AS (
        DELETE FROM pets WHERE id = :id AND revision = :revision RETURNING id
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, trace_context)
        SELECT 'pet.deleted', :occurredAt::timestamptz, pet.id, :pet::text, :traceContext::text
        FROM pet
      )
      SELECT id FROM pet`,
    ),
  };
}

/**
 * Pages of one category, of one status or all: each walks its index of the migration
 * "pets-by-category" from the cursor on, so a deep page costs what page 1 does. SQLite starts the
 * index range at `p.id > :afterId`. PostgreSQL's planner took the primary key for that near the
 * end of the table and filtered a dense category out of it, so there the cursor is a row value
 * over the index's columns, which only that index can start at; beside `category_id = :categoryId`
 * the scan started at the category's first entry, beside `category_id <= :categoryId` it starts at
 * the cursor (docs/performance.md, "The catalogue"). SQLite reads a row value as equality on the
 * category alone.
 */
function categoryPageStatements(db: SqlRunner) {
  const postgres = db.driver.options.type === 'postgres';
  // SQLite plans a bare parameter compared to an indexed column with its bound value, so it
  // prepared these anew on every run; as an expression (`+ 0`, `|| ''`) it plans them once, as it
  // does LIMIT_PARAMETER (docs/performance.md, "The catalogue").
  const inCategory = postgres
    ? '(p.category_id, p.id) > (:categoryId, :afterId) AND p.category_id <= :categoryId ORDER BY p.category_id, p.id'
    : 'p.category_id = :categoryId + 0 AND p.id > :afterId ORDER BY p.id';
  const inCategoryWithStatus = postgres
    ? `p.category_id = :categoryId AND p.status = :status AND
      (p.category_id, p.status, p.id) > (:categoryId, :status, :afterId)
      ORDER BY p.category_id, p.status, p.id`
    : "p.category_id = :categoryId + 0 AND p.status = :status || '' AND p.id > :afterId ORDER BY p.id";
  return {
    pageOfCategory: db.statement<{ categoryId: number; afterId: number; limit: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE ${inCategory} ${LIMIT_PARAMETER}`,
    ),
    pageOfCategoryWithStatus: db.statement<{
      categoryId: number;
      status: PetStatus;
      afterId: number;
      limit: number;
    }>(`SELECT ${PET_COLUMNS} FROM pets p WHERE ${inCategoryWithStatus} ${LIMIT_PARAMETER}`),
  };
}

/** A pet's stored fields, without its revision, which the database counts. */
export type PetFields = Omit<PetEntity, 'revision'>;

interface EventParameters {
  occurredAt: string;
  traceContext: string | null;
}

/**
 * Each change writes its pet and its event (docs/events.md, "Nothing lost"). On PostgreSQL that is
 * one statement, so a create needs no transaction of its own and an update no extra round trip
 * (docs/performance.md, "The event write"); SQLite has no INSERT in a WITH, so there it is two
 * statements, which a transaction must hold together.
 */
function changeStatements(db: SqlRunner) {
  return {
    insertEvent: db.statement<
      EventParameters & { type: string; petId: number; pet: string; previous: string | null }
    >(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      VALUES (:type, :occurredAt, :petId, :pet, :previous, :traceContext)`,
    ),
    insert: db.statement<NewPetRow>(
      'INSERT INTO pets (name, category_id, status) VALUES (:name, :categoryId, :status) RETURNING id',
    ),
    update: db.statement<PetFields & { revision: number }>(
      `UPDATE pets SET name = :name, category_id = :categoryId, status = :status,
      revision = revision + 1 WHERE id = :id AND revision = :revision RETURNING revision`,
    ),
    insertWithEvent: db.statement<NewPetRow & EventParameters & { petAfterId: string }>(
      `WITH pet AS (
        INSERT INTO pets (name, category_id, status) VALUES (:name, :categoryId, :status) RETURNING id
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, trace_context)
        SELECT 'pet.created', :occurredAt::timestamptz, pet.id,
          '${PET_JSON_BEFORE_ID}' || pet.id || :petAfterId::text, :traceContext::text FROM pet
      )
      SELECT id FROM pet`,
    ),
    // Many creates at once: rows are numbered in the arrays' order, and the identity hands out
    // ascending ids in the order rows are inserted, so the n-th id is the n-th pet's.
    insertManyWithEvents: db.statement<{
      names: string[];
      categoryIds: number[];
      statuses: (string | null)[];
      occurredAts: string[];
      petsAfterId: string[];
      traceContexts: (string | null)[];
    }>(
      `WITH input AS (
        SELECT * FROM unnest(:names::text[], :categoryIds::bigint[], :statuses::text[],
          :occurredAts::timestamptz[], :petsAfterId::text[], :traceContexts::text[])
        WITH ORDINALITY AS input (name, category_id, status, occurred_at, pet_after_id,
          trace_context, n)
      ), pet AS (
        INSERT INTO pets (name, category_id, status)
        SELECT name, category_id, status FROM input ORDER BY n RETURNING id
      ), numbered AS (
        SELECT id, row_number() OVER (ORDER BY id) AS n FROM pet
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, trace_context)
        SELECT 'pet.created', input.occurred_at, numbered.id,
          '${PET_JSON_BEFORE_ID}' || numbered.id || input.pet_after_id, input.trace_context
        FROM numbered JOIN input USING (n) ORDER BY n
      )
      SELECT id FROM numbered ORDER BY n`,
    ),
    updateWithEvent: db.statement<
      PetFields & EventParameters & { revision: number; pet: string; previous: string }
    >(
      `WITH pet AS (
        UPDATE pets SET name = :name, category_id = :categoryId, status = :status,
        revision = revision + 1 WHERE id = :id AND revision = :revision RETURNING id, revision
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
        SELECT 'pet.updated', :occurredAt::timestamptz, pet.id, :pet::text, :previous::text,
          :traceContext::text FROM pet
      )
      SELECT revision FROM pet`,
    ),
  };
}

/** All SQL on `pets`, and the inserts of the events pets' changes write. */
@Injectable()
export class PetsRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly postgres: boolean;
  private readonly creates = new TurnBatch((creates: NewPetWithEvent[]) => this.createAll(creates));
  /** Runs each statement in a transaction of its own: for changes that are one statement. */
  private readonly eachStatementAlone: SqlTransaction = {
    query: (sql, params) => this.db.write(sql, params),
  };

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
    this.postgres = db.driver.options.type === 'postgres';
  }

  async findPage({ afterId, status, categoryId, limit }: PetPageQuery): Promise<PetEntity[]> {
    const rows = await this.readPage({ afterId, status, categoryId, limit });
    return rows.map(toPetEntity);
  }

  private readPage({ afterId, status, categoryId, limit }: PetPageQuery): Promise<Row[]> {
    const { page, pageWithStatus, pageOfCategory, pageOfCategoryWithStatus } = this.sql;
    if (categoryId === undefined) {
      return status
        ? this.db.readStatement(pageWithStatus, { status, afterId, limit })
        : this.db.readStatement(page, { afterId, limit });
    }
    return status
      ? this.db.readStatement(pageOfCategoryWithStatus, { categoryId, status, afterId, limit })
      : this.db.readStatement(pageOfCategory, { categoryId, afterId, limit });
  }

  async findById(id: number): Promise<PetEntity | null> {
    const [row] = await this.db.readStatement(this.sql.byId, { id });
    return row ? toPetEntity(row) : null;
  }

  /** The pet as the primary has it: a change decided on it must not start from a replica's lag. */
  async findLatestById(id: number): Promise<PetEntity | null> {
    const [row] = await this.db.writeStatement(this.sql.byId, { id });
    return row ? toPetEntity(row) : null;
  }

  /** Runs `work` in one transaction on the primary: everything it writes commits, or nothing. */
  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The pet, its row locked until `transaction` ends, so no other change interleaves. */
  async lockById(transaction: SqlTransaction, id: number): Promise<PetEntity | null> {
    const { lockById } = this.sql;
    const [row] = await transaction.query(lockById.text, lockById.values({ id }));
    return row ? toPetEntity(row) : null;
  }

  /**
   * Creates the pet with its pet.created event; atomic on its own. On PostgreSQL the creates of
   * one turn of the event loop share one statement, and so commit or fail together (SQLite's
   * transactions share a commit the same way, in its runner).
   */
  create(pet: NewPetRow, event: PetEventRecord): Promise<PetEntity> {
    if (!this.postgres)
      return this.db.transaction((transaction) => this.insert(transaction, pet, event));
    return this.creates.add({ pet, event });
  }

  private async createAll(creates: NewPetWithEvent[]): Promise<PetEntity[]> {
    if (creates.length === 1) {
      const [{ pet, event }] = creates;
      return [await this.insert(this.eachStatementAlone, pet, event)];
    }
    const rows = await this.db.writeStatement(this.sql.insertManyWithEvents, {
      names: creates.map(({ pet }) => pet.name),
      categoryIds: creates.map(({ pet }) => pet.categoryId),
      statuses: creates.map(({ pet }) => pet.status),
      occurredAts: creates.map(({ event }) => event.occurredAt.toISOString()),
      petsAfterId: creates.map(({ pet }) => petJsonAfterId(pet)),
      traceContexts: creates.map(({ event }) => event.traceContext),
    });
    return creates.map(({ pet }, i) => ({ ...pet, id: Number(rows[i].id), revision: 1 }));
  }

  /** Creates the pet with its pet.created event inside `transaction`. */
  async insert(
    transaction: SqlTransaction,
    pet: NewPetRow,
    event: PetEventRecord,
  ): Promise<PetEntity> {
    const { insert, insertWithEvent, insertEvent } = this.sql;
    if (this.postgres) {
      const petAfterId = petJsonAfterId(pet);
      const values = insertWithEvent.values({ ...pet, ...eventParameters(event), petAfterId });
      const [row] = await transaction.query(insertWithEvent.text, values);
      return { ...pet, id: Number(row.id), revision: 1 };
    }
    const [row] = await transaction.query(insert.text, insert.values(pet));
    const created = { ...pet, id: Number(row.id), revision: 1 };
    await transaction.query(
      insertEvent.text,
      insertEvent.values({
        ...eventParameters(event),
        type: 'pet.created',
        petId: created.id,
        pet: petJson(created),
        previous: null,
      }),
    );
    return created;
  }

  /**
   * Stores the pet's new fields if it is still at `revision`, gives it the next one and writes its
   * pet.updated event; null, writing nothing, when another change came first. Atomic on its own.
   */
  updateIfAt(revision: number, pet: PetFields, event: PetEventRecord): Promise<PetEntity | null> {
    // On PostgreSQL the change is one statement, atomic without a transaction of its own.
    if (this.postgres) return this.updateAt(this.eachStatementAlone, revision, pet, event);
    return this.db.transaction((transaction) => this.updateAt(transaction, revision, pet, event));
  }

  /** `updateIfAt` inside `transaction`, of a pet whose row it locked at `revision`. */
  async update(
    transaction: SqlTransaction,
    revision: number,
    pet: PetFields,
    event: PetEventRecord,
  ): Promise<PetEntity> {
    const updated = await this.updateAt(transaction, revision, pet, event);
    if (!updated) throw new Error(`Pet ${pet.id} changed while its row was locked`);
    return updated;
  }

  private async updateAt(
    transaction: SqlTransaction,
    revision: number,
    pet: PetFields,
    event: PetEventRecord,
  ): Promise<PetEntity | null> {
    const { update, updateWithEvent, insertEvent } = this.sql;
    const eventValues = {
      ...eventParameters(event),
      pet: petJson(pet),
      previous: JSON.stringify(event.previous ?? {}),
    };
    if (this.postgres) {
      const values = updateWithEvent.values({ ...pet, revision, ...eventValues });
      const [row] = await transaction.query(updateWithEvent.text, values);
      return row ? { ...pet, revision: Number(row.revision) } : null;
    }
    const [row] = await transaction.query(update.text, update.values({ ...pet, revision }));
    if (!row) return null;
    await transaction.query(
      insertEvent.text,
      insertEvent.values({ ...eventValues, type: 'pet.updated', petId: pet.id }),
    );
    return { ...pet, revision: Number(row.revision) };
  }

  /**
   * Removes the pet if it is still at its revision and writes its pet.deleted event with the pet
   * as it was; false, writing nothing, when another change came first. Atomic on its own. Its id is
   * never given again: the identity on PostgreSQL and AUTOINCREMENT on SQLite only count up.
   */
  deleteIfAt(pet: PetEntity, event: PetEventRecord): Promise<boolean> {
    if (this.postgres) return this.deleteAt(this.eachStatementAlone, pet, event);
    return this.db.transaction((transaction) => this.deleteAt(transaction, pet, event));
  }

  /** `deleteIfAt` inside `transaction`, of a pet whose row it locked at its revision. */
  async delete(transaction: SqlTransaction, pet: PetEntity, event: PetEventRecord): Promise<void> {
    const deleted = await this.deleteAt(transaction, pet, event);
    if (!deleted) throw new Error(`Pet ${pet.id} changed while its row was locked`);
  }

  private async deleteAt(
    transaction: SqlTransaction,
    pet: PetEntity,
    event: PetEventRecord,
  ): Promise<boolean> {
    const { delete: remove, deleteWithEvent, insertEvent } = this.sql;
    const { id, revision } = pet;
    if (this.postgres) {
      const values = { id, revision, pet: petJson(pet), ...eventParameters(event) };
      const rows = await transaction.query(deleteWithEvent.text, deleteWithEvent.values(values));
      return rows.length > 0;
    }
    const [row] = await transaction.query(remove.text, remove.values({ id, revision }));
    if (!row) return false;
    await transaction.query(
      insertEvent.text,
      insertEvent.values({
        ...eventParameters(event),
        type: 'pet.deleted',
        petId: id,
        pet: petJson(pet),
        previous: null,
      }),
    );
    return true;
  }
}

/**
 * PostgreSQL returns `bigint` as a string (it may exceed 2^53); ids and category ids are bounded to
 * Number.MAX_SAFE_INTEGER by validation, so Number() is exact.
 */
function toPetEntity(row: Row): PetEntity {
  return {
    id: Number(row.id),
    name: row.name as string,
    categoryId: Number(row.category_id),
    status: row.status as PetStatus | null,
    revision: Number(row.revision),
  };
}

function eventParameters({ occurredAt, traceContext }: PetEventRecord): EventParameters {
  return { occurredAt: occurredAt.toISOString(), traceContext };
}
