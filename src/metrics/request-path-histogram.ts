/**
 * A Prometheus histogram cheap enough to observe on every request and every SQL statement: each
 * label set's bucket counts live in one typed array, found by a Map lookup, so an observation is a
 * bucket search and three additions. prom-client's Histogram validates and hashes a label object on
 * each `observe`, which cost more than the 5 % of throughput metrics may take (docs/performance.md,
 * "Metrics and tracing on"). It writes itself in Prometheus's text format at scrape time, beside
 * the registry's other metrics (metrics-server.ts).
 */
export class RequestPathHistogram<Label extends string> {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly Label[],
    /** Upper bounds in seconds, ascending; `+Inf` is implied. */
    private readonly buckets: readonly number[],
  ) {}

  /** Records one observation for the label values, given in the order of `labelNames`. */
  observe(labelValues: readonly string[], seconds: number): void {
    const key = labelValues.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        labels: this.formatLabels(labelValues),
        counts: new Float64Array(this.buckets.length + 1),
        sum: 0,
      };
      this.series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > this.buckets[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += seconds;
  }

  /** The histogram in the text exposition format, with cumulative buckets as the format wants. */
  exposition(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum } of this.series.values()) {
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
    if (values.length !== this.labelNames.length)
      throw new Error(`${this.name} takes the labels ${this.labelNames.join(', ')}`);
    return this.labelNames.map((name, i) => `${name}="${escapeLabelValue(values[i])}"`).join(',');
  }
}

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
