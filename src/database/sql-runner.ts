/** A row as the driver returns it, keyed by column name or alias. */
export type Row = Record<string, unknown>;

/** Runs statements inside one transaction: all of them commit, or none. */
export interface SqlTransaction {
  query(sql: string, params: unknown[]): Promise<Row[]>;
}

/**
 * How the repositories run their hand-written SQL, through TypeORM's public API. One class per
 * engine (chosen in `database.module.ts`), because the engines differ in what a transaction needs
 * from everything else running at the same time.
 *
 * Only a SELECT's or a RETURNING clause's rows are meaningful results; callers ignore the rest.
 */
export abstract class SqlRunner {
  /** Which dialect the SQL must be written in: PostgreSQL numbers its placeholders, SQLite does not. */
  abstract readonly engine: 'postgres' | 'sqlite';

  /** A statement that only reads committed data: a read replica may answer it when one is set up. */
  abstract read(sql: string, params: unknown[]): Promise<Row[]>;

  /** A statement that writes, or a read that must see this instance's latest writes. */
  abstract write(sql: string, params: unknown[]): Promise<Row[]>;

  /** Runs `work` in a transaction; a throw rolls it back and is rethrown. */
  abstract transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T>;
}
