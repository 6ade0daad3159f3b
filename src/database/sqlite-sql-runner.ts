import type { Database, Statement } from 'better-sqlite3';
import type { DataSource } from 'typeorm';
import { sqliteConnectionOf } from './data-source.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * SQLite: prepared statements on the one connection TypeORM opened. A statement issued during
 * another request's transaction would run inside it, so while one is open everything else waits;
 * otherwise statements run at once (docs/performance.md). Other processes wait on the file lock.
 */
export class SqliteSqlRunner extends SqlRunner {
  /** A transaction holds the database's write lock from BEGIN IMMEDIATE on: no row lock to add. */
  readonly rowLock = '';
  readonly rowLockSkippingLocked = '';
  private readonly connection: Database;
  private readonly statements = new Map<string, PreparedStatement>();
  /** Settles when the open transaction ends; undefined while none is open. */
  private openTransaction?: Promise<void>;

  constructor(dataSource: DataSource) {
    super(dataSource.driver);
    this.connection = sqliteConnectionOf(dataSource);
  }

  read(sql: string, params: unknown[]): Promise<Row[]> {
    return this.write(sql, params);
  }

  async write(sql: string, params: unknown[]): Promise<Row[]> {
    while (this.openTransaction) await this.openTransaction;
    return this.run(sql, params);
  }

  async transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    while (this.openTransaction) await this.openTransaction;
    let end!: () => void;
    this.openTransaction = new Promise((resolve) => (end = resolve));
    try {
      this.run('BEGIN IMMEDIATE', []);
      try {
        const result = await work({
          query: (sql, params) => Promise.resolve(this.run(sql, params)),
        });
        this.run('COMMIT', []);
        return result;
      } catch (error) {
        this.run('ROLLBACK', []);
        throw error;
      }
    } finally {
      this.openTransaction = undefined;
      end();
    }
  }

  private run(sql: string, params: unknown[]): Row[] {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = prepare(this.connection, sql);
      this.statements.set(sql, prepared);
    }
    const { statement, columns } = prepared;
    if (!columns) {
      statement.run(...params);
      return [];
    }
    return statement.all(...params).map((values) => rowOf(columns, values));
  }
}

interface PreparedStatement {
  statement: Statement<unknown[], unknown[]>;
  /** The result's column names; undefined for a statement that returns no rows. */
  columns?: string[];
}

/**
 * Statements that return rows run in raw mode (arrays), and the rows are built here: better-sqlite3
 * builds each row object through V8's C++ API, which is slower than these plain assignments
 * (docs/performance.md).
 */
function prepare(connection: Database, sql: string): PreparedStatement {
  const statement = connection.prepare<unknown[], unknown[]>(sql);
  if (!statement.reader) return { statement };
  return { statement: statement.raw(true), columns: statement.columns().map(({ name }) => name) };
}

function rowOf(columns: string[], values: unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
  return row;
}
