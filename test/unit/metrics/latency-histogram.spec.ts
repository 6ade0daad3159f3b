import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../../src/metrics/latency-histogram.js';

const BOUNDS = [0.001, 0.01, 0.5];

/** Observations on the boundaries, between them, past the last one, and label values to escape. */
const OBSERVATIONS: [Record<'operation' | 'role', string>, number][] = [
  [{ operation: 'SELECT pets', role: 'primary' }, 0.0004],
  [{ operation: 'SELECT pets', role: 'primary' }, 0.001],
  [{ operation: 'SELECT pets', role: 'primary' }, 0.0100001],
  [{ operation: 'SELECT pets', role: 'replica' }, 2.5],
  [{ operation: 'a "quoted" \\ name\nover lines', role: 'primary' }, 0.5],
];

const HELP = 'Time per statement, \\ and a\nsecond line.';

describe('LatencyHistogram', () => {
  it('writes what prom-client writes for the same observations', async () => {
    const registry = new Registry();
    const reference = new Histogram({
      name: 'statement_seconds',
      help: HELP,
      labelNames: ['operation', 'role'],
      buckets: BOUNDS,
      registers: [registry],
    });
    const histogram = new LatencyHistogram(
      'statement_seconds',
      HELP,
      ['operation', 'role'],
      BOUNDS,
    );
    for (const [labels, seconds] of OBSERVATIONS) {
      reference.observe(labels, seconds);
      histogram.seriesOf(labels).observe(seconds);
    }

    expect(`${histogram.exposition()}\n`).toBe(await registry.metrics());
  });

  it('hands out one series per label values, so a caller may keep it', () => {
    const histogram = new LatencyHistogram('h', 'h', ['operation'], BOUNDS);
    const series = histogram.seriesOf({ operation: 'getPet' });
    series.observe(0.002);
    histogram.seriesOf({ operation: 'getPet' }).observe(0.003);

    expect(histogram.seriesOf({ operation: 'getPet' })).toBe(series);
    expect(series.counts).toEqual([0, 2, 0, 0]);
    expect(series.sum).toBeCloseTo(0.005);
  });

  it('writes a histogram without labels, and one that has seen nothing', () => {
    const empty = new LatencyHistogram('empty_seconds', 'Nothing yet.', [], BOUNDS);
    expect(empty.exposition()).toBe(
      '# HELP empty_seconds Nothing yet.\n# TYPE empty_seconds histogram',
    );

    const unlabelled = new LatencyHistogram('lag_seconds', 'Lag.', [], [1]);
    unlabelled.seriesOf({}).observe(3);
    expect(unlabelled.exposition().split('\n').slice(2)).toEqual([
      'lag_seconds_bucket{le="1"} 0',
      'lag_seconds_bucket{le="+Inf"} 1',
      'lag_seconds_sum 3',
      'lag_seconds_count 1',
    ]);
  });
});
