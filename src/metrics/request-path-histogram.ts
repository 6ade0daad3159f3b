/**
 * A Prometheus histogram cheap enough to observe on every request and every SQL statement: each
 * label set's bucket counts live in one typed array, found through one Map per label keyed by the
 * label's value (no key string is built per observation), so an observation is a few Map lookups,
 * a bucket search and three additions. prom-client's Histogram validates and hashes a label object on
 * each `observe`, which cost more than the 5 % of throughput metrics may take (docs/performance.md,
 * "Metrics and tracing on"). It writes itself in Prometheus's text format at scrape time, beside
 * the registry's other metrics (metrics-server.ts).
 */
export class RequestPathHistogram<Label extends string> {
  /** Label values to series: one Map level per label, in the order of `labelNames`. */
  private readonly byLabelValue = new Map<string, SeriesTree>();
  /** The same series in the order they appeared, for the exposition. */
  private readonly series: Series[] = [];

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly Label[],
    /** Upper bounds in seconds, ascending; `+Inf` is implied. */
    private readonly buckets: readonly number[],
  ) {}

  /** Records one observation for the label values, given in the order of `labelNames`. */
  observe(labelValues: readonly string[], seconds: number): void {
    if (labelValues.length !== this.labelNames.length)
      throw new Error(`${this.name} takes the labels ${this.labelNames.join(', ')}`);
    let level = this.byLabelValue;
    const last = labelValues.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(labelValues[i]) as Map<string, SeriesTree> | undefined;
      if (next === undefined) level.set(labelValues[i], (next = new Map()));
      level = next;
    }
    let series = level.get(labelValues[last]) as Series | undefined;
    if (series === undefined) {
      series = {
        labels: this.formatLabels(labelValues),
        counts: new Float64Array(this.buckets.length + 1),
        sum: 0,
      };
      level.set(labelValues[last], series);
      this.series.push(series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > this.buckets[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += seconds;
  }

  /** The histogram in the text exposition format, with cumulative buckets as the format wants. */
  exposition(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum } of this.series) {
      let cumulative = 0;
      for (let bucket = 0; bucket < counts.length; bucket++) {
        cumulative += counts[bucket];
        const le = bucket < this.buckets.length ? String(this.buckets[bucket]) : '+Inf';
        lines.push(`${this.name}_bucket{${labels},le="${le}"} ${cumulative}`);
      }
      lines.push(
        `${this.name}_sum{${labels}} ${sum}`,
        `${this.name}_count{${labels}} ${cumulative}`,
      );
    }
    return lines.join('\n') + '\n';
  }

  private formatLabels(values: readonly string[]): string {
    return this.labelNames.map((name, i) => `${name}="${escapeLabelValue(values[i])}"`).join(',');
  }
}

/** A Map per label but the last, whose Map holds the series. */
type SeriesTree = Map<string, SeriesTree> | Series;

interface Series {
  /** `name="value",…`, formatted once. */
  labels: string;
  /** Observations per bucket (not cumulative); the last is the `+Inf` bucket. */
  counts: Float64Array;
  sum: number;
}

function escapeHelp(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
}

function escapeLabelValue(value: string): string {
  return escapeHelp(value).replaceAll('"', '\\"');
}
