import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { onReadNode } from './read-node.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * PostgreSQL: every statement takes a pooled connection of its own, and each transaction holds one
 * connection from BEGIN to COMMIT, so concurrent requests never share a transaction. Reads go
 * through a `slave` query runner, which TypeORM sends to the read node when `replication` is
 * configured (DATABASE_READ_URL) and to the primary otherwise.
 *
 * Each statement runs as a named prepared statement on the `pg` connection of its TypeORM query
 * runner (`QueryRunner.connect()`), so PostgreSQL parses and plans it once per connection instead
 * of on every call; TypeORM's `query()` sends every statement unnamed (docs/performance.md,
 * "PostgreSQL against a reference"). TypeORM's query logger still hears of each statement.
 */
export class PostgresSqlRunner extends SqlRunner {
  private readonly statementNames = new Map<string, string>();

  /** `onReadFallback` hears of each read the primary answered because the read node failed. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly onReadFallback: () => void = () => {},
  ) {
    super(dataSource.driver);
  }

  /** On the read node when there is one, falling back to the primary (read-node.ts). */
  read(sql: string, params: unknown[]): Promise<Row[]> {
    return onReadNode(
      this.dataSource,
      (manager) => this.execute(manager.queryRunner!, sql, params),
      this.onReadFallback,
    );
  }

  async write(sql: string, params: unknown[]): Promise<Row[]> {
    const runner = this.dataSource.createQueryRunner('master');
    try {
      return await this.execute(runner, sql, params);
    } finally {
      await runner.release();
    }
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) =>
      work({ query: (sql, params) => this.execute(manager.queryRunner!, sql, params) }),
    );
  }

  private async execute(runner: QueryRunner, sql: string, params: unknown[]): Promise<Row[]> {
    const connection = (await runner.connect()) as pg.PoolClient;
    this.dataSource.logger.logQuery(sql, params, runner);
    try {
      const result = await connection.query<Row>({
        name: this.nameOf(sql),
        text: sql,
        values: params,
      });
      return result.rows;
    } catch (error) {
      this.dataSource.logger.logQueryError(error as Error, sql, params, runner);
      throw error;
    }
  }

  /** One name per statement text: the repository's statements are constants. */
  private nameOf(sql: string): string {
    let name = this.statementNames.get(sql);
    if (name === undefined)
      this.statementNames.set(sql, (name = `s${this.statementNames.size + 1}`));
    return name;
  }
}
