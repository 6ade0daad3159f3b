import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import type { PipelinedReads } from './pipelined-reads.js';
import { onReadNode } from './read-node.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * PostgreSQL: a pooled connection per write or transaction; reads on connections of their own
 * that pipeline them, or, where DATABASE_READ_URL is set, on a `slave` query runner (the read
 * node). Statements run as named prepared statements, planned once per connection
 * (docs/performance.md).
 */
export class PostgresSqlRunner extends SqlRunner {
  readonly rowLock = ' FOR UPDATE';
  readonly rowLockSkippingLocked = ' FOR UPDATE SKIP LOCKED';
  private readonly statementNames = new Map<string, string>();

  /**
   * `onReadFallback` hears of each read the primary answered because the read node failed;
   * `pipelinedReads`, where given, carries the reads.
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly onReadFallback: () => void = () => {},
    private readonly pipelinedReads?: PipelinedReads,
  ) {
    super(dataSource.driver);
  }

  /**
   * On the pipelined connections when there are some; else on the read node when there is one,
   * falling back to the primary (read-node.ts).
   */
  read(sql: string, params: unknown[]): Promise<Row[]> {
    if (this.pipelinedReads) return this.readPipelined(sql, params);
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

  private async readPipelined(sql: string, params: unknown[]): Promise<Row[]> {
    this.dataSource.logger.logQuery(sql, params);
    try {
      return await this.pipelinedReads!.query(this.nameOf(sql), sql, params);
    } catch (error) {
      this.dataSource.logger.logQueryError(error as Error, sql, params);
      throw error;
    }
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
