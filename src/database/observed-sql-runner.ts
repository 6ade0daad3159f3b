import type { HistogramSeries } from '../metrics/latency-histogram.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Row, SqlRunner, type SqlTransaction } from './sql-runner.js';
import { inSpan, isTracingOn } from '../telemetry/tracing.js';

/** Which server answered: reads may go to a read replica, everything else to the primary. */
export type DatabaseRole = 'primary' | 'replica';

/** A write inside a WITH: its verb and its table. */
const WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+("?[\w.]+"?)/gi;

/** A parenthesised part with none inside it: a subquery, a value list, a call's arguments. */
const INNERMOST_PARENTHESES = /\([^()]*\)/g;

/**
 * `SELECT pets`, `INSERT idempotency_keys`: a statement's name, never its values. A statement is
 * named by its own table, not by a subquery's; a WITH that writes is named by its writes
 * (`INSERT pets + INSERT pet_events`), any other WITH by the first table its parts read.
 */
export function statementName(sql: string): string {
  const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  if (verb === 'WITH') {
    const writes = [...sql.matchAll(WRITE)].map(
      ([, write, table]) => `${write.split(/\s/)[0].toUpperCase()} ${table.replaceAll('"', '')}`,
    );
    if (writes.length > 0) return writes.join(' + ');
  }
  const table = /\b(?:FROM|INTO|UPDATE)\s+("?[\w.]+"?)/i
    .exec(verb === 'WITH' ? sql : outsideParentheses(sql))?.[1]
    ?.replaceAll('"', '');
  return table ? `${verb} ${table}` : verb;
}

function outsideParentheses(sql: string): string {
  let outside = sql;
  for (let before = ''; before !== outside;) {
    before = outside;
    outside = outside.replaceAll(INNERMOST_PARENTHESES, ' ');
  }
  return outside;
}

/**
 * A span (tracing on) and a duration (metrics on) per statement; built only when one is on
 * (database.module.ts). Statements are constants with placeholders, so their names are a bounded
 * label and their text holds no values.
 */
export class ObservedSqlRunner extends SqlRunner {
  private readonly names = new Map<string, string>();
  private readonly primarySeries = new Map<string, HistogramSeries>();
  private readonly replicaSeries = new Map<string, HistogramSeries>();
  readonly rowLock: string;
  readonly rowLockSkippingLocked: string;

  constructor(
    private readonly inner: SqlRunner,
    private readonly metrics: Metrics | undefined,
    private readonly readRole: DatabaseRole,
  ) {
    super(inner.driver);
    this.rowLock = inner.rowLock;
    this.rowLockSkippingLocked = inner.rowLockSkippingLocked;
  }

  read(sql: string, params: unknown[]): Promise<Row[]> {
    if (isTracingOn()) return this.traced(sql, this.readRole, () => this.inner.read(sql, params));
    const startedAt = performance.now();
    return this.timed(sql, this.readRole, startedAt, this.inner.read(sql, params));
  }

  write(sql: string, params: unknown[]): Promise<Row[]> {
    if (isTracingOn()) return this.traced(sql, 'primary', () => this.inner.write(sql, params));
    const startedAt = performance.now();
    return this.timed(sql, 'primary', startedAt, this.inner.write(sql, params));
  }

  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    const query = (transaction: SqlTransaction, sql: string, params: unknown[]) => {
      if (isTracingOn()) return this.traced(sql, 'primary', () => transaction.query(sql, params));
      const startedAt = performance.now();
      return this.timed(sql, 'primary', startedAt, transaction.query(sql, params));
    };
    return inSpan('transaction', { 'db.system.name': this.system() }, () =>
      this.inner.transaction((transaction) =>
        work({ query: (sql, params) => query(transaction, sql, params) }),
      ),
    );
  }

  /** The statement in a span of its own, timed inside it when metrics are on too. */
  private traced(sql: string, role: DatabaseRole, run: () => Promise<Row[]>): Promise<Row[]> {
    return inSpan(
      this.nameOf(sql),
      { 'db.system.name': this.system(), 'db.query.text': sql, 'animal_store.db.role': role },
      () => this.timed(sql, role, performance.now(), run()),
    );
  }

  /**
   * Records the statement's duration when it settles and hands back the runner's own promise, so
   * the caller waits no extra step. The clock starts before the runner is called: on SQLite the
   * statement runs inside that call.
   */
  private timed(
    sql: string,
    role: DatabaseRole,
    startedAt: number,
    result: Promise<Row[]>,
  ): Promise<Row[]> {
    if (this.metrics === undefined) return result;
    const series = this.seriesOf(sql, role);
    const record = () => series.observe((performance.now() - startedAt) / 1000);
    result.then(record, record);
    return result;
  }

  /** A statement's duration series, found once per statement text and role. */
  private seriesOf(sql: string, role: DatabaseRole): HistogramSeries {
    const found = role === 'primary' ? this.primarySeries : this.replicaSeries;
    let series = found.get(sql);
    if (series === undefined) {
      series = this.metrics!.databaseQueryDuration.seriesOf({ operation: this.nameOf(sql), role });
      found.set(sql, series);
    }
    return series;
  }

  private nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) this.names.set(sql, (name = statementName(sql)));
    return name;
  }

  private system(): string {
    return this.driver.options.type === 'postgres' ? 'postgresql' : 'sqlite';
  }
}
