import type { Database, Statement } from 'better-sqlite3';
import type { DataSource } from 'typeorm';
import { sqliteConnectionOf } from './data-source.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';

/**
 * WAL pages after which a COMMIT copies the WAL into the database file (SQLite's default: 1,000).
 * That checkpoint's fsyncs stall the event loop however few pages it copies, so under writes
 * fewer of them make fewer slow answers (docs/performance.md, "SQLite checkpoints").
 */
const CHECKPOINT_PAGES = 4_000;

/** The SQLite transaction that the units of work of one turn of the event loop share. */
interface CommitGroup {
  /** Settles when the group's COMMIT ran: resolved when it committed, rejected when not. */
  readonly committed: Promise<void>;
  /** Set once the COMMIT is under way: a unit that comes later opens the next group. */
  closing: boolean;
  /**
   * Why the transaction can no longer commit: SQLite rolled it back under a failed unit. Its
   * other units fail; later ones wait for the next group.
   */
  broken?: Error;
}

/**
 * SQLite: prepared statements on the one connection TypeORM opened. The transactions that start
 * in one turn of the event loop share one SQLite transaction, each in a savepoint of its own, and
 * one COMMIT at the end of that turn: a group commit (docs/architecture.md, "SQLite"). Each still
 * commits or rolls back as a whole, and none settles before its COMMIT. A statement issued while a
 * group is open would see its uncommitted writes, so everything else waits for its COMMIT;
 * otherwise statements run at once. The reads of a turn share a read transaction, so SQLite takes
 * its locks on the file once a turn, not once a read; a write ends it first. Other processes wait
 * on the file lock.
 */
export class SqliteSqlRunner extends SqlRunner {
  /** A transaction holds the database's write lock from BEGIN IMMEDIATE on: no row lock to add. */
  readonly rowLock = '';
  readonly rowLockSkippingLocked = '';
  private readonly connection: Database;
  private readonly statements = new Map<string, PreparedStatement>();
  /** The open group; undefined while none is open. */
  private group?: CommitGroup;
  /** Settles when the unit of work running in the group ends; undefined while none runs. */
  private unit?: Promise<void>;
  /** Whether this turn's read transaction is open. */
  private reading = false;

  constructor(dataSource: DataSource) {
    super(dataSource.driver);
    this.connection = sqliteConnectionOf(dataSource);
    this.connection.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
  }

  async read(sql: string, params: unknown[]): Promise<Row[]> {
    while (this.group) await this.group.committed.catch(() => {});
    if (!this.reading) this.beginReading();
    return this.run(sql, params);
  }

  async write(sql: string, params: unknown[]): Promise<Row[]> {
    while (this.group) await this.group.committed.catch(() => {});
    this.endReading();
    return this.run(sql, params);
  }

  async transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    for (;;) {
      if (this.unit) await this.unit;
      else if (this.group?.closing || this.group?.broken)
        await this.group.committed.catch(() => {});
      else break;
    }
    const group = this.group ?? this.openGroup();
    let end!: () => void;
    this.unit = new Promise((resolve) => (end = resolve));
    let outcome: { result: T } | { error: unknown };
    try {
      outcome = { result: await this.inSavepoint(group, work) };
    } catch (error) {
      outcome = { error };
    } finally {
      this.unit = undefined;
      end();
    }
    // Even a failure answers after the COMMIT: it may rest on what the turn's earlier
    // transactions wrote, and a COMMIT that fails takes precedence.
    await group.committed;
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  }

  /** Runs `work` so that a throw undoes what it wrote and nothing else of the group. */
  private async inSavepoint<T>(
    group: CommitGroup,
    work: (transaction: SqlTransaction) => Promise<T>,
  ): Promise<T> {
    this.run('SAVEPOINT unit', []);
    try {
      const result = await work({ query: (sql, params) => Promise.resolve(this.run(sql, params)) });
      this.run('RELEASE unit', []);
      return result;
    } catch (error) {
      try {
        this.run('ROLLBACK TO unit', []);
        this.run('RELEASE unit', []);
      } catch {
        // SQLite ended the whole transaction (a full disk, say): the group commits nothing.
        group.broken = new Error('SQLite ended the transaction of this turn', { cause: error });
      }
      throw error;
    }
  }

  /** BEGIN, and its COMMIT once this turn's callbacks have run: the turn's reads share it. */
  private beginReading(): void {
    this.run('BEGIN', []);
    this.reading = true;
    setImmediate(this.endReading);
  }

  /** Ends the turn's read transaction, if open: before a write, and as the turn ends. */
  private readonly endReading = (): void => {
    if (!this.reading) return;
    this.reading = false;
    // An error SQLite rolls back by itself (a full disk, say) may have ended it already. A read
    // transaction has nothing to keep: one that cannot commit is rolled back, never thrown here.
    try {
      if (this.connection.inTransaction) this.run('COMMIT', []);
    } catch {
      try {
        if (this.connection.inTransaction) this.run('ROLLBACK', []);
      } catch {
        // A read transaction's ROLLBACK has nothing to fail on; were it to, nothing is thrown here.
      }
    }
  };

  /** BEGIN IMMEDIATE, and the group's COMMIT once this turn's callbacks have run. */
  private openGroup(): CommitGroup {
    this.endReading();
    this.run('BEGIN IMMEDIATE', []);
    const committed = new Promise<void>((resolve, reject) => {
      setImmediate(() => void this.commit(group).then(resolve, reject));
    });
    // Its units take the failure; a group whose only unit failed may have none waiting.
    committed.catch(() => {});
    const group: CommitGroup = { committed, closing: false };
    this.group = group;
    return group;
  }

  /** Commits the group once its last unit ended; rolls it back when it cannot. */
  private async commit(group: CommitGroup): Promise<void> {
    group.closing = true;
    while (this.unit) await this.unit;
    this.group = undefined;
    try {
      if (group.broken) throw group.broken;
      this.run('COMMIT', []);
    } catch (error) {
      if (this.connection.inTransaction) this.run('ROLLBACK', []);
      throw error;
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
