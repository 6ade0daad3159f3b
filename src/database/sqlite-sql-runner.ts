import type { DataSource } from 'typeorm';
import { inTransaction, type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * SQLite: TypeORM runs every statement of the process on one connection. A statement issued while
 * another request's transaction is open would run inside that transaction: it would read rows that
 * may still be rolled back, and a rollback would undo its write after it was acknowledged. So
 * statements and transactions here run one after another, never interleaved. Each is short and
 * synchronous in better-sqlite3, so the queue costs a promise, not a wait. Another process on the
 * same file is kept out by SQLite's own file lock.
 */
export class SqliteSqlRunner extends SqlRunner {
  readonly engine = 'sqlite';
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly dataSource: DataSource) {
    super();
  }

  read(sql: string, params: unknown[]): Promise<Row[]> {
    return this.write(sql, params);
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    return this.serially(() => this.dataSource.query<Row[]>(sql, params));
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.serially(() =>
      this.dataSource.transaction((manager) => work(inTransaction(manager))),
    );
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
