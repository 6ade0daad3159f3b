import { Injectable } from '@nestjs/common';
import { type Row, SqlRunner, type SqlTransaction } from '../database/sql-runner.js';
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
      WHERE c.id > :afterId AND c.name IS NOT NULL ORDER BY c.id LIMIT :limit`,
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
    // The change log holds what changed in its `pet` column and that thing's id in `pet_id`; the
    // type says it is a category (docs/events.md, "Events").
    insertEvent: db.statement<{
      type: CategoryEventType;
      occurredAt: string;
      id: number;
      category: string;
      previous: string | null;
      traceContext: string | null;
    }>(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      VALUES (:type, :occurredAt, :id, :category, :previous, :traceContext)`,
    ),
  };
}

/** All SQL on `categories`, and the inserts of the events their changes write. */
@Injectable()
export class CategoriesRepository {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
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
    { occurredAt, traceContext, previousName }: CategoryEventRecord,
  ): Promise<void> {
    const { insertEvent } = this.sql;
    const values = insertEvent.values({
      type,
      occurredAt: occurredAt.toISOString(),
      id: category.id,
      category: JSON.stringify({ id: category.id, name: category.name }),
      previous: previousName === undefined ? null : JSON.stringify({ name: previousName }),
      traceContext,
    });
    await transaction.query(insertEvent.text, values);
  }
}

/** PostgreSQL returns bigint as text; ids are bounded to MAX_SAFE_INTEGER, so Number() is exact. */
function toCategoryEntity(row: Row): CategoryEntity {
  return {
    id: Number(row.id),
    name: row.name as string | null,
    revision: Number(row.revision),
  };
}
