import type { DataSource, EntityManager } from 'typeorm';
import { onReadNode } from './read-node.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * PostgreSQL: every statement takes a pooled connection of its own, and each transaction holds one
 * connection from BEGIN to COMMIT, so concurrent requests never share a transaction. Reads go
 * through a `slave` query runner, which TypeORM sends to the read node when `replication` is
 * configured (DATABASE_READ_URL) and to the primary otherwise.
 */
export class PostgresSqlRunner extends SqlRunner {
  readonly engine = 'postgres';

  /** `onReadFallback` hears of each read the primary answered because the read node failed. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly onReadFallback: () => void = () => {},
  ) {
    super();
  }

  /** On the read node when there is one, falling back to the primary (read-node.ts). */
  read(sql: string, params: unknown[]): Promise<Row[]> {
    return onReadNode(
      this.dataSource,
      (manager) => manager.query<Row[]>(sql, params),
      this.onReadFallback,
    );
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
