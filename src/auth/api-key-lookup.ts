import { Injectable } from '@nestjs/common';
import { SqlRunner, type Statement } from '../database/sql-runner.js';
import type { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyRows } from './api-key-rows.js';

/**
 * Finds stored keys on the read node like pet reads (SqlRunner.read), so that a crashed primary
 * does not refuse every client whose key is not cached (docs/deployment.md).
 */
@Injectable()
export class ApiKeyLookup {
  /**
   * Lookups in flight, by prefix. When a trusted key's 2 seconds run out, every request then in
   * flight with it misses the cache at once; they share one query instead of each running its
   * own lookup back to back (docs/performance.md).
   */
  private readonly inFlight = new Map<string, Promise<ApiKeyEntity | null>>();
  private readonly rows: ApiKeyRows;
  private readonly byPrefixStatement: Statement<{ prefix: string }>;
  /** By id count, a power of two: byIds's statements. */
  private readonly byIdsStatements = new Map<number, Statement<Record<string, number>>>();

  constructor(private readonly db: SqlRunner) {
    this.rows = new ApiKeyRows(db);
    this.byPrefixStatement = db.statement(
      `SELECT ${this.rows.columns} FROM api_keys WHERE prefix = :prefix`,
    );
  }

  byPrefix(prefix: string): Promise<ApiKeyEntity | null> {
    let lookup = this.inFlight.get(prefix);
    if (!lookup) {
      const { text, values } = this.byPrefixStatement;
      lookup = this.db
        .read(text, values({ prefix }))
        .then(([row]) => (row ? this.rows.toEntity(row) : null))
        .finally(() => this.inFlight.delete(prefix));
      this.inFlight.set(prefix, lookup);
    }
    return lookup;
  }

  /**
   * The stored keys with these ids (those that still exist), in one query. One parameter per id:
   * callers pass the keys of open streams, far fewer than either engine's limit.
   */
  async byIds(ids: readonly number[]): Promise<ApiKeyEntity[]> {
    if (ids.length === 0) return [];
    // Padded with the first id to a power of two, so that a few statement texts serve every count.
    const count = 2 ** Math.ceil(Math.log2(ids.length));
    const parameters: Record<string, number> = {};
    for (let i = 0; i < count; i++) parameters[`id${i}`] = ids[i] ?? ids[0];
    const { text, values } = this.byIdsStatement(count);
    return (await this.db.read(text, values(parameters))).map((row) => this.rows.toEntity(row));
  }

  private byIdsStatement(count: number): Statement<Record<string, number>> {
    let statement = this.byIdsStatements.get(count);
    if (!statement) {
      const ids = Array.from({ length: count }, (_, i) => `:id${i}`).join(', ');
      statement = this.db.statement(
        `SELECT ${this.rows.columns} FROM api_keys WHERE id IN (${ids})`,
      );
      this.byIdsStatements.set(count, statement);
    }
    return statement;
  }
}
