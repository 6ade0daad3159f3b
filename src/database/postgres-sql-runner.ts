import type { DataSource, EntityManager } from 'typeorm';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * PostgreSQL: every statement takes a pooled connection of its own, and each transaction holds one
 * connection from BEGIN to COMMIT, so concurrent requests never share a transaction. Reads go
 * through a `slave` query runner, which TypeORM sends to a replica when `replication` is configured
 * and to the primary otherwise.
 */
export class PostgresSqlRunner extends SqlRunner {
  readonly engine = 'postgres';

  constructor(private readonly dataSource: DataSource) {
    super();
  }

  async read(sql: string, params: unknown[]): Promise<Row[]> {
    const runner = this.dataSource.createQueryRunner('slave');
    try {
      return (await runner.query(sql, params)) as Row[];
    } finally {
      await runner.release();
    }
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    return this.dataSource.query<Row[]>(sql, params);
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(inTransaction(manager)));
  }
}

function inTransaction(manager: EntityManager): SqlTransaction {
  return { query: (sql, params) => manager.query<Row[]>(sql, params) };
}
