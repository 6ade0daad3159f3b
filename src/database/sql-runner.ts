import type { Driver } from 'typeorm';

/** A row as the driver returns it, keyed by column name or alias. */
export type Row = Record<string, unknown>;

/** Runs statements inside one transaction: all of them commit, or none. */
export interface SqlTransaction {
  query(sql: string, params: unknown[]): Promise<Row[]>;
}

/**
 * A statement written once with `:name` parameters, in one engine's dialect: `text` has that
 * engine's placeholders and never changes, so the engine prepares it once; `values` lists a call's
 * parameters in the order those placeholders take them.
 */
export interface Statement<P> {
  readonly text: string;
  readonly values: (parameters: P) => unknown[];
}

/**
 * A `LIMIT` of the `:limit` parameter that SQLite plans once. Given a bare parameter, SQLite plans
 * with its bound value and so prepares the statement anew on every run (docs/performance.md, "A
 * LIMIT parameter"); `+ 0` makes it a value known only when the statement runs, on both engines.
 */
export const LIMIT_PARAMETER = 'LIMIT :limit + 0';

/** A `:name` parameter; the second colon of a PostgreSQL cast (`::text`) starts none. */
const PARAMETER = /(?<!:):(\w+)/g;

/**
 * `sql` in the dialect of TypeORM's `driver`, which writes the placeholders and orders the values.
 * Each name is passed as its own value, so the order comes back as names and the text stays
 * constant (a real number would be inlined into SQLite's text).
 */
export function inDialect<P extends object>(driver: Driver, sql: string): Statement<P> {
  const names = Object.fromEntries([...sql.matchAll(PARAMETER)].map(([, name]) => [name, name]));
  const [text, order] = driver.escapeQueryWithParameters(sql, names) as [string, (keyof P)[]];
  return { text, values: (parameters) => order.map((name) => parameters[name]) };
}

/**
 * How the repositories run their SQL, through TypeORM's public API: one class per engine
 * (database.module.ts), because they differ in what a transaction needs from everything else
 * running meanwhile. Only a SELECT's or a RETURNING clause's rows are meaningful results.
 */
export abstract class SqlRunner {
  /** `driver`: TypeORM's driver of the engine that runs the statements. */
  constructor(readonly driver: Driver) {}

  /** `sql`, written with `:name` parameters, in this engine's dialect: build it once, at start. */
  statement<P extends object>(sql: string): Statement<P> {
    return inDialect(this.driver, sql);
  }

  /**
   * A SELECT, written as for `statement`, that also locks the rows it reads until the transaction
   * ends, so a read-then-write in one transaction never interleaves with another's.
   */
  lockingStatement<P extends object>(sql: string): Statement<P> {
    return this.statement(`${sql}${this.rowLock}`);
  }

  /** What a SELECT needs to lock the rows it reads, in this engine's dialect. */
  abstract readonly rowLock: string;

  /**
   * What a SELECT needs to lock the rows it reads and pass over those another transaction holds,
   * so concurrent claimers each take different rows instead of queueing on the same ones.
   */
  abstract readonly rowLockSkippingLocked: string;

  /**
   * A statement that only reads committed data: a read replica may answer it when one is set up,
   * and on SQLite it runs in the turn's read transaction, so never a write or a statement SQLite
   * refuses inside a transaction (VACUUM, a journal mode, a checkpoint).
   */
  abstract read(sql: string, params: unknown[]): Promise<Row[]>;

  /** A statement that writes, or a read that must see this instance's latest writes. */
  abstract write(sql: string, params: unknown[]): Promise<Row[]>;

  /** `read` of a built statement with a call's parameters. */
  readStatement<P>(statement: Statement<P>, parameters: P): Promise<Row[]> {
    return this.read(statement.text, statement.values(parameters));
  }

  /** `write` of a built statement with a call's parameters. */
  writeStatement<P>(statement: Statement<P>, parameters: P): Promise<Row[]> {
    return this.write(statement.text, statement.values(parameters));
  }

  /** Runs `work` in a transaction; a throw rolls it back and is rethrown. */
  abstract transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T>;
}
