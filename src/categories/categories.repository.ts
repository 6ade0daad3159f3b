import { Injectable } from '@nestjs/common';
import {
  LIMIT_PARAMETER,
  type Row,
  SqlRunner,
  type SqlTransaction,
} from '../database/sql-runner.js';
import type { CategoryEventType } from '../events/pet-event.js';
import type { CategoryEntity, NamedCategory } from './category.entity.js';

/** What a category's change records next to it: when, and the trace of the request. */
export interface CategoryEventRecord {
  occurredAt: Date;
  traceContext: string | null;
  /** category.updated only: the name before, when the category had one. */
  previousName?: string;
}

const CATEGORY_COLUMNS = 'c.id, c.name, c.revision';

/** The statements, each written once, so each text is constant (pets.repository.ts says why). */
function statements(db: SqlRunner) {
  return {
    page: db.statement<{ afterId: number; limit: number }>(
      `SELECT ${CATEGORY_COLUMNS} FROM categories c
      WHERE c.id > :afterId AND c.name IS NOT NULL ORDER BY c.id ${LIMIT_PARAMETER}`,
    ),
    byId: db.statement<{ id: number }>(
      `SELECT ${CATEGORY_COLUMNS} FROM categories c WHERE c.id = :id`,
    ),
    lockById: db.lockingStatement<{ id: number }>(
      `SELECT ${CATEGORY_COLUMNS} FROM categories c WHERE c.id = :id`,
    ),
    // A concurrent insert of the same id wins the primary key: nothing comes back, and the caller
    // starts again on the row it wrote. A name another row holds fails the UNIQUE constraint.
    insert: db.statement<{ id: number; name: string }>(
      `INSERT INTO categories (id, name) VALUES (:id, :name)
      ON CONFLICT (id) DO NOTHING RETURNING revision`,
    ),
    setName: db.statement<{ id: number; name: string | null }>(
      'UPDATE categories SET name = :name, revision = revision + 1 WHERE id = :id RETURNING revision',
    ),
    setNameAt: db.statement<{ id: number; name: string; revision: number }>(
      `UPDATE categories SET name = :name, revision = revision + 1
      WHERE id = :id AND revision = :revision RETURNING revision`,
    ),
    // The change log holds what changed in its `pet` column and that thing's id in `pet_id`; the
    // type says it is a category (docs/events.md, "Events").
    insertEvent: db.statement<EventValues>(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      VALUES (:type, :occurredAt, :id, :category, :previous, :traceContext)`,
    ),
    ...namingWithEventStatements(db),
  };
}

interface EventValues {
  type: CategoryEventType;
  occurredAt: string;
  id: number;
  category: string;
  previous: string | null;
  traceContext: string | null;
}

/**
 * PostgreSQL's naming of a category with its event in one statement, atomic without a transaction
 * of its own, as a pet's update is (src/pets/pets.repository.ts): no row back when the id was
 * added, or the row changed, meanwhile.
 */
function namingWithEventStatements(db: SqlRunner) {
  const withEvent = (change: string) =>
    `WITH category AS (${change} RETURNING id, revision), event AS (
      INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      SELECT :type, :occurredAt::timestamptz, category.id, :category::text, :previous::text,
        :traceContext::text FROM category
    )
    SELECT revision FROM category`;
  return {
    insertWithEvent: db.statement<EventValues & { name: string }>(
      withEvent(
        'INSERT INTO categories (id, name) VALUES (:id, :name) ON CONFLICT (id) DO NOTHING',
      ),
    ),
    setNameAtWithEvent: db.statement<EventValues & { name: string; revision: number }>(
      withEvent(`UPDATE categories SET name = :name, revision = revision + 1
        WHERE id = :id AND revision = :revision`),
    ),
  };
}

/** All SQL on `categories`, and the inserts of the events their changes write. */
@Injectable()
export class CategoriesRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly postgres: boolean;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
    this.postgres = db.driver.options.type === 'postgres';
  }

  /** Named categories after `afterId`, in id order: keyset paging, as pets have it. */
  async findPage(afterId: number, limit: number): Promise<NamedCategory[]> {
    const rows = await this.db.readStatement(this.sql.page, { afterId, limit });
    return rows.map(toCategoryEntity) as NamedCategory[];
  }

  /** The category's row, named or not; null when the id was never named. */
  async findById(id: number): Promise<CategoryEntity | null> {
    const [row] = await this.db.readStatement(this.sql.byId, { id });
    return row ? toCategoryEntity(row) : null;
  }

  /** The category's row as the primary has it: a change decided on it must not start from a lag. */
  async findLatestById(id: number): Promise<CategoryEntity | null> {
    const [row] = await this.db.writeStatement(this.sql.byId, { id });
    return row ? toCategoryEntity(row) : null;
  }

  /**
   * Names category `id` and writes its category.updated event, if its row is still at `revision`,
   * or, with no revision, if the id still has no row; undefined, writing nothing, when another
   * change came first. Atomic on its own. Throws the UNIQUE violation when another category has
   * the name.
   */
  async nameIfAt(
    id: number,
    name: string,
    revision: number | undefined,
    record: CategoryEventRecord,
  ): Promise<NamedCategory | undefined> {
    const event = eventValues('category.updated', { id, name }, record);
    const [row] = this.postgres
      ? await this.nameWithEvent(name, revision, event)
      : await this.db.transaction((transaction) =>
          this.nameThenEvent(transaction, name, revision, event),
        );
    return row && { id, name, revision: Number(row.revision) };
  }

  /** PostgreSQL: the naming and its event in one statement. */
  private nameWithEvent(
    name: string,
    revision: number | undefined,
    event: EventValues,
  ): Promise<Row[]> {
    const { insertWithEvent, setNameAtWithEvent } = this.sql;
    return revision === undefined
      ? this.db.writeStatement(insertWithEvent, { ...event, name })
      : this.db.writeStatement(setNameAtWithEvent, { ...event, name, revision });
  }

  /** SQLite: the naming, then its event when it named, in `transaction`. */
  private async nameThenEvent(
    transaction: SqlTransaction,
    name: string,
    revision: number | undefined,
    event: EventValues,
  ): Promise<Row[]> {
    const { insert, setNameAt, insertEvent } = this.sql;
    const { id } = event;
    const rows =
      revision === undefined
        ? await transaction.query(insert.text, insert.values({ id, name }))
        : await transaction.query(setNameAt.text, setNameAt.values({ id, name, revision }));
    if (rows.length > 0) await transaction.query(insertEvent.text, insertEvent.values(event));
    return rows;
  }

  /** Runs `work` in one transaction on the primary: everything it writes commits, or nothing. */
  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The category's row, locked until `transaction` ends, so no other change interleaves. */
  async lockById(transaction: SqlTransaction, id: number): Promise<CategoryEntity | null> {
    const { lockById } = this.sql;
    const [row] = await transaction.query(lockById.text, lockById.values({ id }));
    return row ? toCategoryEntity(row) : null;
  }

  /**
   * Adds the row of a never-named id with `name`; undefined, writing nothing, when another
   * transaction added it first. Throws the UNIQUE violation when another category has the name.
   */
  async insert(
    transaction: SqlTransaction,
    id: number,
    name: string,
  ): Promise<NamedCategory | undefined> {
    const { insert } = this.sql;
    const [row] = await transaction.query(insert.text, insert.values({ id, name }));
    return row && { id, name, revision: Number(row.revision) };
  }

  /**
   * Gives the locked row `name` (null deletes the category) and its next revision. Throws the
   * UNIQUE violation when another category has the name.
   */
  async setName(
    transaction: SqlTransaction,
    id: number,
    name: string | null,
  ): Promise<CategoryEntity> {
    const { setName } = this.sql;
    const [row] = await transaction.query(setName.text, setName.values({ id, name }));
    return { id, name, revision: Number(row.revision) };
  }

  /** Writes the change's event inside its transaction (docs/events.md, "Nothing lost"). */
  async insertEvent(
    transaction: SqlTransaction,
    type: CategoryEventType,
    category: NamedCategory,
    record: CategoryEventRecord,
  ): Promise<void> {
    const { insertEvent } = this.sql;
    const values = insertEvent.values(eventValues(type, category, record));
    await transaction.query(insertEvent.text, values);
  }
}

function eventValues(
  type: CategoryEventType,
  { id, name }: Pick<NamedCategory, 'id' | 'name'>,
  { occurredAt, traceContext, previousName }: CategoryEventRecord,
): EventValues {
  return {
    type,
    occurredAt: occurredAt.toISOString(),
    id,
    category: JSON.stringify({ id, name }),
    previous: previousName === undefined ? null : JSON.stringify({ name: previousName }),
    traceContext,
  };
}

/** PostgreSQL returns bigint as text; ids are bounded to MAX_SAFE_INTEGER, so Number() is exact. */
function toCategoryEntity(row: Row): CategoryEntity {
  return {
    id: Number(row.id),
    name: row.name as string | null,
    revision: Number(row.revision),
  };
}
