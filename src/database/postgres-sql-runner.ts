import type { DataSource, EntityManager } from 'typeorm';
import { isReadNodeFailure } from './database-errors.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * PostgreSQL: every statement takes a pooled connection of its own, and each transaction holds one
 * connection from BEGIN to COMMIT, so concurrent requests never share a transaction. Reads go
 * through a `slave` query runner, which TypeORM sends to the read node when `replication` is
 * configured (DATABASE_READ_URL) and to the primary otherwise.
 */
export class PostgresSqlRunner extends SqlRunner {
  readonly engine = 'postgres';
  private readonly hasReadNode: boolean;

  /** `onReadFallback` hears of each read the primary answered because the read node failed. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly onReadFallback: () => void = () => {},
  ) {
    super();
    this.hasReadNode = dataSource.options.type === 'postgres' && !!dataSource.options.replication;
  }

  /**
   * A read node that is down, restarting, being promoted or cancelling the query for replay costs
   * no failed request: the read is asked again of the primary (docs/deployment.md). An error the
   * query itself caused is not retried.
   */
  async read(sql: string, params: unknown[]): Promise<Row[]> {
    if (!this.hasReadNode) return this.runOn('master', sql, params);
    try {
      return await this.runOn('slave', sql, params);
    } catch (error) {
      if (!isReadNodeFailure(error)) throw error;
      this.onReadFallback();
      return this.runOn('master', sql, params);
    }
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    return this.dataSource.query<Row[]>(sql, params);
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(inTransaction(manager)));
  }

  private async runOn(mode: 'master' | 'slave', sql: string, params: unknown[]): Promise<Row[]> {
    const runner = this.dataSource.createQueryRunner(mode);
    try {
      return (await runner.query(sql, params)) as Row[];
    } finally {
      await runner.release();
    }
  }
}

function inTransaction(manager: EntityManager): SqlTransaction {
  return { query: (sql, params) => manager.query<Row[]>(sql, params) };
}
