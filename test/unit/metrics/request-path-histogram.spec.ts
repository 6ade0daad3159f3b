import { describe, expect, it } from 'vitest';
import { RequestPathHistogram } from '../../../src/metrics/request-path-histogram.js';

describe('RequestPathHistogram', () => {
  const histogram = () =>
    new RequestPathHistogram(
      't_seconds',
      'Test "help"\\ with\na newline.',
      ['op', 'role'],
      [0.01, 0.1],
    );

  it('writes nothing but HELP and TYPE before the first observation', () => {
    expect(histogram().exposition()).toBe(
      '# HELP t_seconds Test "help"\\\\ with\\na newline.\n# TYPE t_seconds histogram\n',
    );
  });

  it('writes cumulative buckets, +Inf, sum and count per label set, bounds inclusive', () => {
    const h = histogram();
    h.observe(['read', 'primary'], 0.01);
    h.observe(['read', 'primary'], 0.05);
    h.observe(['read', 'primary'], 3);
    h.observe(['write', 'replica'], 0.001);
    expect(h.exposition().split('\n').slice(2)).toEqual([
      't_seconds_bucket{op="read",role="primary",le="0.01"} 1',
      't_seconds_bucket{op="read",role="primary",le="0.1"} 2',
      't_seconds_bucket{op="read",role="primary",le="+Inf"} 3',
      't_seconds_sum{op="read",role="primary"} 3.06',
      't_seconds_count{op="read",role="primary"} 3',
      't_seconds_bucket{op="write",role="replica",le="0.01"} 1',
      't_seconds_bucket{op="write",role="replica",le="0.1"} 1',
      't_seconds_bucket{op="write",role="replica",le="+Inf"} 1',
      't_seconds_sum{op="write",role="replica"} 0.001',
      't_seconds_count{op="write",role="replica"} 1',
      '',
    ]);
  });

  it('keeps label sets apart whatever characters their values hold', () => {
    const h = histogram();
    h.observe(['a\u0000b', 'c'], 1);
    h.observe(['a', 'b\u0000c'], 1);
    expect(h.exposition().match(/t_seconds_count\{[^}]*\} \d+/g)).toEqual([
      't_seconds_count{op="a\u0000b",role="c"} 1',
      't_seconds_count{op="a",role="b\u0000c"} 1',
    ]);
  });

  it('escapes label values as the text format requires', () => {
    const h = histogram();
    h.observe(['a"b\\c\nd', 'primary'], 0.5);
    expect(h.exposition()).toContain('t_seconds_count{op="a\\"b\\\\c\\nd",role="primary"} 1');
  });

  it('refuses label values that do not match its label names', () => {
    expect(() => histogram().observe(['read'], 1)).toThrow('t_seconds takes the labels op, role');
  });
});
