/**
 * One series of a LatencyHistogram: its counts per bucket (the last is +Inf) and their sum.
 * Observing is a bucket search and three additions, with nothing allocated.
 */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: string,
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]) bucket += 1;
    this.counts[bucket] += 1;
    this.sum += value;
  }
}

/**
 * A histogram for the request path, where an observation happens per request and per statement
 * (docs/performance.md, "Metrics on the request path"). Callers find a series once, by its label
 * values, and keep it; prom-client's `observe` builds a key from the labels on every call. Written
 * in the exposition format as prom-client writes its own histograms.
 */
export class LatencyHistogram<L extends string> {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
  ) {}

  /** The series of these label values, made on first use. */
  seriesOf(labels: Record<L, string>): HistogramSeries {
    const formatted = this.labelNames
      .map((name) => `${name}="${escapeLabelValue(labels[name])}"`)
      .join(',');
    let series = this.series.get(formatted);
    if (series === undefined) {
      series = new HistogramSeries(this.bounds, formatted);
      this.series.set(formatted, series);
    }
    return series;
  }

  /** `# HELP`, `# TYPE`, then per series its cumulative buckets, `_sum` and `_count`. */
  exposition(): string {
    const lines = [`# HELP ${this.name} ${escapeText(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum } of this.series.values()) {
      const withLabels = labels === '' ? '' : `,${labels}`;
      const inBraces = labels === '' ? '' : `{${labels}}`;
      let cumulative = 0;
      counts.forEach((count, bucket) => {
        cumulative += count;
        const bound = bucket < this.bounds.length ? String(this.bounds[bucket]) : '+Inf';
        lines.push(`${this.name}_bucket{le="${bound}"${withLabels}} ${cumulative}`);
      });
      lines.push(
        `${this.name}_sum${inBraces} ${sum}`,
        `${this.name}_count${inBraces} ${cumulative}`,
      );
    }
    return lines.join('\n');
  }
}

function escapeText(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
}

function escapeLabelValue(value: string): string {
  return escapeText(value).replaceAll('"', '\\"');
}
