import { type Row, SqlRunner, type SqlTransaction } from '../database/sql-runner.js';
import { inSpan } from './tracing.js';

/** `SELECT pets`, `INSERT idempotency_keys`: a span name from a statement, never its values. */
export function statementName(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const table = /\b(?:FROM|INTO|UPDATE)\s+("?[\w.]+"?)/i.exec(sql)?.[1]?.replaceAll('"', '');
  return table ? `${verb} ${table}` : verb;
}

/**
 * A span per statement on either engine, around the engine's own runner; used only while tracing
 * is on (database.module.ts). The SQL text is constant, with `$n`/`?` placeholders, so it goes in
 * the span as it is: values never do.
 */
export class TracedSqlRunner extends SqlRunner {
  readonly engine: SqlRunner['engine'];

  constructor(private readonly inner: SqlRunner) {
    super();
    this.engine = inner.engine;
  }

  read(sql: string, params: unknown[]): Promise<Row[]> {
    return this.traced(sql, 'read', () => this.inner.read(sql, params));
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    return this.traced(sql, 'write', () => this.inner.write(sql, params));
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return inSpan('transaction', { 'db.system.name': this.system() }, () =>
      this.inner.transaction((transaction) =>
        work({
          query: (sql, params) =>
            this.traced(sql, 'transaction', () => transaction.query(sql, params)),
        }),
      ),
    );
  }

  private traced(sql: string, kind: string, run: () => Promise<Row[]>): Promise<Row[]> {
    return inSpan(
      statementName(sql),
      { 'db.system.name': this.system(), 'db.query.text': sql, 'animal_store.db.kind': kind },
      run,
    );
  }

  private system(): string {
    return this.engine === 'postgres' ? 'postgresql' : 'sqlite';
  }
}
