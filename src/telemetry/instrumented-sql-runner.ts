import type { Metrics } from '../metrics/metrics.js';
import { type Row, SqlRunner, type SqlTransaction } from '../database/sql-runner.js';
import { inSpan, isTracingOn } from './tracing.js';

/** Which server answered: reads may go to a read replica, everything else to the primary. */
export type DatabaseRole = 'primary' | 'replica';

/** `SELECT pets`, `INSERT idempotency_keys`: a statement's name, never its values. */
export function statementName(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const table = /\b(?:FROM|INTO|UPDATE)\s+("?[\w.]+"?)/i.exec(sql)?.[1]?.replaceAll('"', '');
  return table ? `${verb} ${table}` : verb;
}

/**
 * Wraps an engine's runner with a span per statement (tracing on) and a duration per statement
 * (metrics on); built only when one of them is on, so otherwise the engine's runner is used as it
 * is (database.module.ts). The statements are constants with `$n`/`?` placeholders, so their
 * names are a bounded label and their text is safe in a span: values never appear.
 */
export class InstrumentedSqlRunner extends SqlRunner {
  readonly engine: SqlRunner['engine'];
  private readonly names = new Map<string, string>();

  constructor(
    private readonly inner: SqlRunner,
    private readonly metrics: Metrics | undefined,
    private readonly readRole: DatabaseRole,
  ) {
    super();
    this.engine = inner.engine;
  }

  read(sql: string, params: unknown[]): Promise<Row[]> {
    return this.observed(sql, this.readRole, () => this.inner.read(sql, params));
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    return this.observed(sql, 'primary', () => this.inner.write(sql, params));
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return inSpan('transaction', { 'db.system.name': this.system() }, () =>
      this.inner.transaction((transaction) =>
        work({
          query: (sql, params) =>
            this.observed(sql, 'primary', () => transaction.query(sql, params)),
        }),
      ),
    );
  }

  private observed(sql: string, role: DatabaseRole, run: () => Promise<Row[]>): Promise<Row[]> {
    const operation = this.nameOf(sql);
    const timed = this.metrics ? () => this.timed(operation, role, run) : run;
    if (!isTracingOn()) return timed();
    return inSpan(
      operation,
      { 'db.system.name': this.system(), 'db.query.text': sql, 'animal_store.db.role': role },
      timed,
    );
  }

  private timed(operation: string, role: DatabaseRole, run: () => Promise<Row[]>): Promise<Row[]> {
    const startedAt = performance.now();
    const record = () =>
      this.metrics!.databaseQueryDuration.observe(
        [operation, role],
        (performance.now() - startedAt) / 1000,
      );
    return run().finally(record);
  }

  private nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) this.names.set(sql, (name = statementName(sql)));
    return name;
  }

  private system(): string {
    return this.engine === 'postgres' ? 'postgresql' : 'sqlite';
  }
}
