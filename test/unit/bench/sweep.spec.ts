import { describe, expect, it } from 'vitest';
import { summarizeSweep } from '../../../bench/lib/sweep.mjs';

const LAPSED = 100_000;

/** One 2-second slice of createPet load. */
const load = (rps: number) => ({ requests: rps * 2, rps, p50Ms: 5, p99Ms: 20, errors: 0 });

/** One round: the slices of each contender, pair by pair, and how long the sweep ran. */
function round(n: number, service: number[], sweeping: number[], sweepSeconds: number) {
  const run = (contender: string, rates: number[]) => ({
    contender,
    round: n,
    coldStartMs: 900,
    peakRssMb: 150,
    scenarios: { create: rates.map(load) },
  });
  const sweep = {
    lapsed: LAPSED,
    seconds: sweepSeconds,
    perSecond: LAPSED / sweepSeconds,
    expired: LAPSED,
    notExpired: 0,
    available: LAPSED,
    events: LAPSED,
  };
  return [run('service', service), { ...run('sweeping', sweeping), sweep }];
}

const outcomes = (targets: { name: string; met: boolean }[]) =>
  targets.map(({ name, met }) => [name, met]);

describe('the sweep bench summary', () => {
  it('takes the median sweep rate over the rounds and the median createPet ratio over every slice pair', () => {
    const runs = [
      ...round(1, [1000, 1000], [900, 800], 40), // 2,500/s; 0.90, 0.80
      ...round(2, [1000, 1000, 1000], [700, 950, 600], 50), // 2,000/s; 0.70, 0.95, 0.60
      ...round(3, [1000], [850], 80), // 1,250/s; 0.85
    ];

    const { sweep, targets } = summarizeSweep(runs, { pg: undefined, connections: 32 });

    expect(sweep.perSecond).toBe(2000);
    expect(sweep.create.pairs).toBe(6);
    expect(sweep.create.rps).toBeCloseTo(0.825, 10);
    expect(sweep.create.p99).toBe(1);
    expect(sweep.rounds.map((r: { pairs: number }) => r.pairs)).toEqual([2, 3, 1]);
    expect(sweep.rounds.map((r: { createRatio: number }) => r.createRatio)).toEqual([
      expect.closeTo(0.85, 10),
      0.7,
      0.85,
    ]);
    expect(outcomes(targets)).toEqual([
      ['sweep of 100,000 lapsed holds, expiries/s', true],
      ['create req/s, sweeping / service', false],
      ['service peak RSS under load', true],
      ['service cold start to /health/ready (SQLite)', true],
      ['errors (non-2xx, socket errors, timeouts)', true],
    ]);
  });

  it('misses the sweep line below 2,000 expiries a second however createPet fares', () => {
    const runs = [
      ...round(1, [1000, 1000], [950, 900], 51),
      ...round(2, [1000, 1000], [900, 950], 60),
    ];

    const { sweep, targets } = summarizeSweep(runs, { pg: 'postgres://x/bench', connections: 32 });

    expect(sweep.perSecond).toBeCloseTo((LAPSED / 51 + LAPSED / 60) / 2, 6);
    expect(outcomes(targets).slice(0, 2)).toEqual([
      ['sweep of 100,000 lapsed holds, expiries/s', false],
      ['create req/s, sweeping / service', true],
    ]);
  });
});
