import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../database/sql-runner.js';

/** The `category_id` of the counts of every category (migration "pet-counts"). */
export const EVERY_CATEGORY = 0;

/** Pets by status as `pet_counts` keys them; 'none' for a pet without one. */
export type CountedStatus = 'available' | 'pending' | 'sold' | 'none';

/** Any 64-bit constant shared by every replica: one fold at a time across processes. */
const FOLD_LOCK_ID = 7_413_202_613;

function statements(db: SqlRunner) {
  const postgres = db.driver.options.type === 'postgres';
  return {
    // The folded counts plus the changes not folded yet: one statement, so one snapshot, and the
    // fold moves changes into counts in one transaction, so a read sees each change once.
    counts: db.statement<{ categoryId: number }>(
      `SELECT counted.status, SUM(counted.n) AS n FROM (
        SELECT c.status, c.n FROM pet_counts c WHERE c.category_id = :categoryId
        UNION ALL
        SELECT d.status, d.n FROM pet_count_changes d WHERE d.category_id = :categoryId
      ) counted GROUP BY counted.status`,
    ),
    // PostgreSQL: the changes this snapshot sees move in one statement; those committed meanwhile
    // stay for the next fold. Only the instance that gets the lock folds.
    foldAll: postgres
      ? db.statement<object>(
          `WITH folding AS (SELECT pg_try_advisory_xact_lock(${FOLD_LOCK_ID}) AS mine),
          moved AS (
            DELETE FROM pet_count_changes WHERE (SELECT mine FROM folding)
            RETURNING category_id, status, n
          )
          INSERT INTO pet_counts (category_id, status, n)
          SELECT category_id, status, SUM(n) FROM moved GROUP BY category_id, status
          ON CONFLICT (category_id, status) DO UPDATE SET n = pet_counts.n + excluded.n`,
        )
      : undefined,
    // SQLite: both statements in one transaction, which holds the only write lock.
    addChanges: db.statement<object>(
      `INSERT INTO pet_counts (category_id, status, n)
      SELECT category_id, status, SUM(n) FROM pet_count_changes WHERE true
      GROUP BY category_id, status
      ON CONFLICT (category_id, status) DO UPDATE SET n = pet_counts.n + excluded.n`,
    ),
    deleteChanges: db.statement<object>('DELETE FROM pet_count_changes'),
  };
}

/** All SQL on `pet_counts` and `pet_count_changes`, which triggers on `pets` append to. */
@Injectable()
export class InventoryRepository {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
  }

  /** Pets of `categoryId` (EVERY_CATEGORY: all) by status; a status with none may be absent. */
  async countByStatus(categoryId: number): Promise<Map<CountedStatus, number>> {
    const rows = await this.db.readStatement(this.sql.counts, { categoryId });
    return new Map(rows.map((row) => [row.status as CountedStatus, Number(row.n)]));
  }

  /** Adds the appended changes into the counts and removes them, in one transaction. */
  async fold(): Promise<void> {
    const { foldAll, addChanges, deleteChanges } = this.sql;
    if (foldAll) {
      await this.db.writeStatement(foldAll, {});
      return;
    }
    await this.db.transaction(async (transaction) => {
      await transaction.query(addChanges.text, addChanges.values({}));
      await transaction.query(deleteChanges.text, deleteChanges.values({}));
    });
  }
}
