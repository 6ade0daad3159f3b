import { describe, expect, it } from 'vitest';
import {
  combine,
  summarize,
  summarizeEvents,
  summarizeWebhookDeliveries,
} from '../../../bench/lib/report.mjs';

/** One 2-second slice of load. */
const load = (rps: number, p50Ms: number, p99Ms: number, errors = 0) => ({
  requests: rps * 2,
  rps,
  p50Ms,
  p99Ms,
  errors,
});

function run(
  contender: string,
  round: number,
  rps: number,
  p99Ms: number,
  extra: { coldStartMs?: number; peakRssMb?: number } = {},
) {
  return {
    contender,
    round,
    coldStartMs: extra.coldStartMs ?? 900,
    peakRssMb: extra.peakRssMb ?? 150,
    scenarios: { list: [load(rps, 5, p99Ms)] },
  };
}

describe('bench summary', () => {
  it('takes the median of the per-slice ratios, not the ratio of medians', () => {
    const runs = [
      run('service', 1, 500, 20),
      run('reference', 1, 1000, 10), // 0.50, p99 2.0
      run('service', 2, 900, 20),
      run('reference', 2, 1000, 20), // 0.90, p99 1.0
      run('service', 3, 300, 30),
      run('reference', 3, 1000, 10), // 0.30, p99 3.0
    ];

    const { ratios } = summarize(runs, ['list'], { pg: undefined, scale: false, connections: 32 });

    expect(ratios!.list).toEqual({ pairs: 3, rps: 0.5, p99: 2 });
  });

  it('pairs each service slice with the reference slice taken next to it', () => {
    const slices = (contender: string, ...loads: ReturnType<typeof load>[]) => ({
      ...run(contender, 1, 0, 0),
      scenarios: { list: loads },
    });
    const runs = [
      // The VM slows down between the first and the last pair: both contenders see it.
      slices('service', load(600, 5, 20), load(300, 9, 40), load(310, 9, 38)),
      slices('reference', load(1000, 2, 10), load(500, 4, 20), load(1000, 2, 10)),
    ];

    const { ratios, contenders } = summarize(runs, ['list'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    // p99: the round's, per side (here the median slice's: no quantiles), 38 / 10.
    expect(ratios!.list).toEqual({ pairs: 3, rps: 0.6, p99: 3.8 });
    // Totals over the slices: requests over seconds, and the median slice's latencies.
    const service = (contenders as Record<string, { scenarios: Record<string, unknown> }>).service;
    expect(service.scenarios.list).toEqual({
      rps: (1200 + 600 + 620) / 6,
      p50Ms: 9,
      p99Ms: 38,
      errors: 0,
    });
  });

  it('checks each target and says which were missed', () => {
    const runs = [
      run('service', 1, 400, 30, { coldStartMs: 1600, peakRssMb: 180 }),
      run('reference', 1, 1000, 10),
    ];

    const { targets } = summarize(runs, ['list'], { pg: undefined, scale: false, connections: 32 });

    expect(targets.map(({ name, met }: { name: string; met: boolean }) => [name, met])).toEqual([
      ['list req/s, service/reference', false],
      ['list p99 at 32 connections, service/reference', false],
      ['service peak RSS under load', true],
      ['service cold start to /health/ready (SQLite)', false],
      ['errors (non-2xx, socket errors, timeouts)', true],
    ]);
  });

  it("holds the patch scenario to the same lines as the others: req/s ≥ 0.60 and p99 ≤ 2× the reference's", () => {
    const withPatch = (contender: string, rps: number, p99Ms: number) => ({
      ...run(contender, 1, 1000, 10),
      scenarios: { list: [load(1000, 5, 10)], patch: [load(rps, 5, p99Ms)] },
    });
    const runs = [withPatch('service', 550, 25), withPatch('reference', 1000, 10)];

    const { targets } = summarize(runs, ['list', 'patch'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(targets.filter((t: { name: string }) => t.name.startsWith('patch'))).toEqual([
      {
        name: 'patch req/s, service/reference',
        value: 0.55,
        target: '≥ 0.6',
        met: false,
      },
      {
        name: 'patch p99 at 32 connections, service/reference',
        value: 2.5,
        target: '≤ 2',
        met: false,
      },
    ]);
  });

  it('holds deletePet and putCategory to 0.70 of the reference', () => {
    const withWrites = (contender: string, deletes: number, puts: number) => ({
      ...run(contender, 1, 1000, 10),
      scenarios: { deletePet: [load(deletes, 5, 10)], putCategory: [load(puts, 5, 10)] },
    });
    // 0.65 would meet the 0.60 line of the other scenarios.
    const runs = [withWrites('service', 650, 700), withWrites('reference', 1000, 1000)];

    const { targets } = summarize(runs, ['deletePet', 'putCategory'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(targets.filter((t: { name: string }) => t.name.includes('req/s'))).toEqual([
      { name: 'deletePet req/s, service/reference', value: 0.65, target: '≥ 0.7', met: false },
      { name: 'putCategory req/s, service/reference', value: 0.7, target: '≥ 0.7', met: true },
    ]);
  });

  it('holds createOrder and completeOrder to 0.70 of the reference and a p99 within 1.5× its', () => {
    const withOrders = (contender: string, rps: [number, number], p99Ms: [number, number]) => ({
      ...run(contender, 1, 1000, 10),
      scenarios: {
        createOrder: [load(rps[0], 5, p99Ms[0])],
        completeOrder: [load(rps[1], 5, p99Ms[1])],
      },
    });
    // 0.65 and a p99 1.6× the reference's would meet the lines of the other scenarios.
    const runs = [
      withOrders('service', [650, 700], [15, 16]),
      withOrders('reference', [1000, 1000], [10, 10]),
    ];

    const { targets } = summarize(runs, ['createOrder', 'completeOrder'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(targets.filter((t: { name: string }) => /Order (req|p99)/.test(t.name))).toEqual([
      { name: 'createOrder req/s, service/reference', value: 0.65, target: '≥ 0.7', met: false },
      {
        name: 'createOrder p99 at 32 connections, service/reference',
        value: 1.5,
        target: '≤ 1.5',
        met: true,
      },
      { name: 'completeOrder req/s, service/reference', value: 0.7, target: '≥ 0.7', met: true },
      {
        name: 'completeOrder p99 at 32 connections, service/reference',
        value: 1.6,
        target: '≤ 1.5',
        met: false,
      },
    ]);
  });

  it('counts the errors of every slice of every contender', () => {
    const runs = [
      {
        ...run('service', 1, 500, 10),
        scenarios: { list: [load(500, 5, 10), load(500, 5, 10, 2)] },
      },
      {
        ...run('reference', 1, 1000, 10),
        scenarios: { list: [load(1000, 2, 5, 1), load(1000, 2, 5)] },
      },
    ];

    const { targets } = summarize(runs, ['list'], { pg: undefined, scale: false, connections: 32 });

    expect(targets.find(({ name }: { name: string }) => name.startsWith('errors'))).toMatchObject({
      value: 3,
      met: false,
    });
  });

  it('compares a deep page with page 1 under --scale, and skips the cold-start target on PostgreSQL', () => {
    const scaleRun = {
      ...run('service', 1, 1000, 10),
      scenarios: {
        list: [load(1000, 4, 9), load(900, 4, 9), load(1000, 5, 9)],
        deep: [load(950, 5, 10), load(950, 6, 10), load(900, 5, 10)],
      },
    };

    const { ratios, deepOverPage1, targets } = summarize([scaleRun], ['list', 'deep'], {
      scale: true,
      pg: 'postgres://x',
      connections: 32,
    });

    expect(ratios).toBeUndefined();
    expect(deepOverPage1).toBe(1.25);
    expect(targets.map((t: { name: string }) => t.name)).toEqual([
      'deep page p50 / page 1 p50',
      'service peak RSS under load',
      'errors (non-2xx, socket errors, timeouts)',
    ]);
  });

  it('under --scale with the catalogue scenarios, checks its pages against the list and the inventory p99', () => {
    const scaleRun = {
      ...run('service', 1, 1000, 10),
      scenarios: {
        list: [load(1000, 4, 9)],
        deep: [load(1000, 4, 9)],
        category: [load(950, 4, 9)],
        categoryStatus: [load(800, 4, 9)],
        categoryDeep: [load(950, 6, 9)],
        inventory: [load(2000, 2, 60)],
      },
    };
    const names = ['list', 'deep', 'category', 'categoryStatus', 'categoryDeep', 'inventory'];

    const { catalogue, targets } = summarize([scaleRun], names, {
      scale: true,
      pg: 'postgres://x',
      connections: 32,
    });

    expect(catalogue).toEqual({
      deepOverPage1: 1.5,
      categoryOverList: 0.95,
      categoryStatusOverList: 0.8,
      inventoryP99Ms: 60,
    });
    expect(
      targets
        .filter(({ name }: { name: string }) => /category|Inventory/.test(name))
        .map(({ name, met }: { name: string; met: boolean }) => [name, met]),
    ).toEqual([
      ['category deep page p50 / its page 1 p50', false],
      ['category page req/s / list req/s', true],
      ['category+status page req/s / list req/s', false],
      ['getInventory p99', false],
    ]);
  });

  it("under --scale, pairs the filtered pages' slices with the list's taken in the same turn", () => {
    // The VM's speed drifts over a round, and one category slice stalled: slice for slice the
    // category runs at 0.9 of the list, while round 2's totals would say 0.54.
    const scaleRun = (round: number, list: number[], category: number[]) => ({
      ...run('service', round, 1000, 10),
      scenarios: {
        list: list.map((rps) => load(rps, 4, 9)),
        deep: list.map((rps) => load(rps, 4, 9)),
        category: category.map((rps) => load(rps, 4, 9)),
        categoryStatus: list.map((rps) => load(rps, 4, 9)),
        categoryDeep: category.map((rps) => load(rps, 4, 9)),
        inventory: list.map((rps) => load(rps, 2, 9)),
      },
    });
    const runs = [
      scaleRun(1, [3000, 1000, 1000], [2700, 900, 900]),
      scaleRun(2, [2000, 2000, 500], [1800, 200, 450]), // 0.9, 0.1, 0.9
    ];
    const names = ['list', 'deep', 'category', 'categoryStatus', 'categoryDeep', 'inventory'];

    const { catalogue } = summarize(runs, names, { scale: true, pg: undefined, connections: 32 });

    expect(catalogue?.categoryOverList).toBeCloseTo(0.9, 10);
    expect(catalogue?.categoryStatusOverList).toBe(1);
  });
  it("pools the slices' quantiles into one latency distribution", () => {
    const quantiles = (ms: (i: number) => number) => Array.from({ length: 1000 }, (_, i) => ms(i));
    // 2,000 requests all at 1 ms, then 2,000 with 10 % of them at 50 ms: 5 % of all are slow.
    const fast = { ...load(1000, 1, 1), quantilesMs: quantiles(() => 1) };
    const stalled = { ...load(1000, 1, 50), quantilesMs: quantiles((i) => (i < 900 ? 1 : 50)) };

    const pooled = combine([fast, stalled]);

    expect(pooled.p50Ms).toBe(1);
    expect(pooled.p99Ms).toBe(50);
    expect(combine([fast, fast]).p99Ms).toBe(1);
  });

  it('with --observability, compares metrics on and tracing on with both off, and checks the 0.95 line', () => {
    const runs = [
      run('service', 1, 1000, 10),
      run('metrics', 1, 960, 11),
      run('tracing', 1, 700, 15),
      run('service', 2, 1000, 10),
      run('metrics', 2, 900, 12),
      run('tracing', 2, 650, 16),
    ];

    const { ratios, observability, targets } = summarize(runs, ['list'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(ratios).toBeUndefined();
    expect(observability).toEqual({
      metrics: { list: { pairs: 2, rps: expect.closeTo(0.93, 9), p99: expect.closeTo(1.15, 9) } },
      tracing: { list: { pairs: 2, rps: expect.closeTo(0.675, 9), p99: expect.closeTo(1.55, 9) } },
    });
    expect(targets.find((t) => t.name === 'list req/s, metrics on / off')).toMatchObject({
      value: expect.closeTo(0.93, 9),
      met: false,
    });
  });

  it('with --against, compares the service with the build before, and holds create and patch to 0.90 of it', () => {
    const scenarios = (list: number, create: number, patch: number) => ({
      list: [load(list, 5, 10)],
      create: [load(create, 5, 10), load(create, 5, 10)],
      patch: [load(patch, 5, 10)],
    });
    const round = (contender: string, n: number, rates: [number, number, number]) => ({
      ...run(contender, n, 0, 0),
      scenarios: scenarios(...rates),
    });
    const runs = [
      round('service', 1, [1000, 850, 950]),
      round('before', 1, [1000, 1000, 1000]),
      round('service', 2, [1100, 880, 900]),
      round('before', 2, [1000, 1000, 1000]),
    ];

    const { ratios, againstBefore, targets } = summarize(runs, ['list', 'create', 'patch'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(ratios).toBeUndefined();
    expect(againstBefore!.create).toEqual({ pairs: 4, rps: expect.closeTo(0.865, 9), p99: 1 });
    expect(againstBefore!.list.rps).toBeCloseTo(1.05, 9);
    // Only the writes have a line against the build before.
    expect(targets.filter((t: { name: string }) => t.name.includes('before'))).toEqual([
      {
        name: 'create req/s, service/before',
        value: expect.closeTo(0.865, 9),
        target: '≥ 0.9',
        met: false,
      },
      {
        name: 'patch req/s, service/before',
        value: expect.closeTo(0.925, 9),
        target: '≥ 0.9',
        met: true,
      },
    ]);
  });

  it('with --streams, compares the service holding streams open with the service without, and holds list and get to 0.90 of it and the memory to 100 MB', () => {
    const memory = (rssMb: number, heapUsedMb: number) => ({ rssMb, heapUsedMb, heapTotalMb: 100 });
    const holding = (round: number, rps: number, rssMb: number, peakRssMb: number) => ({
      ...run('streams', round, rps, 10, { peakRssMb }),
      openStreams: {
        count: 1000,
        before: memory(200, 40),
        with: memory(rssMb, 50),
        endedEarly: round === 2 ? 1 : 0,
        bytes: 27000,
      },
    });
    const runs = [
      run('service', 1, 1000, 10, { peakRssMb: 190 }),
      holding(1, 950, 230, 230),
      run('service', 2, 1000, 10, { peakRssMb: 195 }),
      holding(2, 850, 210, 240),
      run('service', 3, 1000, 10, { peakRssMb: 180 }),
      holding(3, 800, 260, 200),
    ];

    const { ratios, streams, targets } = summarize(runs, ['list'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(ratios).toBeUndefined();
    expect(streams).toEqual({
      count: 1000,
      ratios: { list: { pairs: 3, rps: 0.85, p99: 1 } },
      // The change within each process when its streams opened, the median over rounds.
      rssMb: 30,
      heapUsedMb: 10,
      heapTotalMb: 0,
      // The highest peak of each contender over the run: 240 − 195.
      peakRssMb: 45,
      endedEarly: 1,
    });
    expect(targets.filter((t: { name: string }) => /streams/.test(t.name))).toEqual([
      { name: 'list req/s, 1,000 streams open / none', value: 0.85, target: '≥ 0.9', met: false },
      {
        name: 'RSS with 1,000 streams open − before them',
        value: 30,
        target: '≤ 100 MB',
        met: true,
      },
      {
        name: 'peak RSS under load, 1,000 streams open − none',
        value: 45,
        target: '≤ 100 MB',
        met: true,
      },
      {
        name: 'streams the server ended before the round did',
        value: 1,
        target: '≤ 0',
        met: false,
      },
    ]);
  });

  it('with --webhooks, compares the service with webhooks subscribed with the service without, holds it to 0.85, and reports how long deliveries took to catch up', () => {
    const subscribed = (round: number, rps: number, drainMs: number[]) => ({
      ...run('webhooks', round, rps, 10),
      webhooks: { drainMs, receivers: [{ deliveries: 30, events: 30 }] },
    });
    const runs = [
      run('service', 1, 1000, 10),
      subscribed(1, 900, [100, 300]),
      run('service', 2, 1000, 10),
      subscribed(2, 800, [200]),
      run('service', 3, 1000, 10),
      subscribed(3, 700, [900]),
    ];

    const { webhooks, targets } = summarize(runs, ['list'], {
      pg: undefined,
      scale: false,
      connections: 32,
    });

    expect(webhooks).toEqual({
      ratios: { list: { pairs: 3, rps: 0.8, p99: 1 } },
      drainMs: { median: 250, max: 900 },
      receivers: [
        [{ deliveries: 30, events: 30 }],
        [{ deliveries: 30, events: 30 }],
        [{ deliveries: 30, events: 30 }],
      ],
    });
    expect(targets.filter((t: { name: string }) => /webhooks/.test(t.name))).toEqual([
      { name: 'list req/s, with webhooks / none', value: 0.8, target: '≥ 0.85', met: false },
    ]);
  });
});

describe('bench summary of --events', () => {
  const eventsRound = (
    eventsPerSecond: number,
    fromSentMs: number[],
    arrived = fromSentMs.length,
  ) => ({
    follower: { events: 100_000, pages: 1001, seconds: 100_000 / eventsPerSecond, eventsPerSecond },
    stream: {
      sent: fromSentMs.length,
      createsPerSecond: 199,
      created: fromSentMs.length,
      arrived,
      repeated: 0,
      fromSentMs,
      fromAnswerMs: fromSentMs.map((ms) => ms - 5),
    },
  });

  it("takes the follower's median over rounds, and the percentiles of every streamed event of every round together", () => {
    // 200 events: 198 at 10 ms, then one round's two slow ones: p99 is the 198th, the max the slowest.
    const rounds = [
      eventsRound(21_000, Array<number>(100).fill(10)),
      eventsRound(30_000, [...Array<number>(98).fill(10), 900, 1500]),
      eventsRound(15_000, []),
    ];

    const summary = summarizeEvents(rounds, { pg: undefined });

    expect(summary).toMatchObject({
      followerEventsPerSecond: 21_000,
      fromSentMs: { p50: 10, p99: 10, max: 1500 },
      fromAnswerMs: { p50: 5, p99: 5, max: 1495 },
      createsPerSecond: 199,
      sent: 200,
      created: 200,
      arrived: 200,
    });
  });

  it('holds the follower to 20,000 events/s on SQLite and 10,000 on PostgreSQL, the stream to a p99 of 1 s, and counts missed events', () => {
    const rounds = [eventsRound(15_000, [...Array<number>(98).fill(10), 1200, 1300], 99)];

    const outcome = (pg: string | undefined) =>
      summarizeEvents(rounds, { pg }).targets.map(
        ({ name, met }: { name: string; met: boolean }) => [name, met],
      );

    expect(outcome(undefined)).toEqual([
      ['follower events/s', false],
      ['commit to a stream on the same instance, p99 from the create sent', false],
      ['creates not answered 201', true],
      ['events the stream missed', false],
      ['events the stream sent twice', true],
    ]);
    expect(outcome('postgres://x').slice(0, 2)).toEqual([
      ['follower events/s', true],
      ['commit to a stream on another instance, p99 from the create sent', false],
    ]);
  });
});

describe('bench summary of --webhooks deliveries', () => {
  const phase = (fromSentMs: number[], owedSamples: number[], extra = {}) => ({
    sent: 100,
    createsPerSecond: 99.5,
    created: 100,
    failures: {},
    owed: 300,
    missing: 0,
    deliveries: 302,
    fromSentMs,
    fromAnswerMs: fromSentMs.map((ms) => ms - 5),
    owedSamples,
    ...extra,
  });

  it("takes percentiles over every first delivery of a phase's runs, the owed samples' halves of each run, and counts repeats", () => {
    const summary = summarizeWebhookDeliveries(
      {
        healthy: [
          { round: 1, ...phase([...Array<number>(99).fill(20), 700], [5, 9, 7, 6]) },
          { round: 2, ...phase(Array<number>(100).fill(30), [12, 4, 3, 8]) },
        ],
      },
      { createsPerSecond: 100, receivers: 3 },
    ) as Record<string, unknown>;

    expect(summary.healthy).toMatchObject({
      fromSentMs: { p50: 30, p99: 30, max: 700 },
      fromAnswerMs: { p50: 25, p99: 25, max: 695 },
      runs: [
        { round: 1, fromSentMs: { p50: 20, p99: 20, max: 700 } },
        { round: 2, fromSentMs: { p50: 30, p99: 30, max: 30 } },
      ],
      sent: 200,
      owedFirstHalfMax: 12,
      owedSecondHalfP50: 6,
      owedSecondHalfMax: 8,
      repeated: 4,
    });
    expect(summary.downCost).toBeUndefined();
  });

  it("sets the down receiver's cost, withDown − healthy, beside the spread of the healthy runs", () => {
    const { downCost } = summarizeWebhookDeliveries(
      {
        healthy: [
          { round: 1, ...phase(Array<number>(100).fill(20), [1, 1]) },
          { round: 2, ...phase(Array<number>(100).fill(26), [1, 1]) },
        ],
        withDown: [
          { round: 1, ...phase(Array<number>(100).fill(24), [1, 1]) },
          { round: 2, ...phase(Array<number>(100).fill(25), [1, 1]) },
        ],
      },
      { createsPerSecond: 100, receivers: 3 },
    );

    expect(downCost).toEqual({
      p50Ms: 4,
      p99Ms: -1,
      healthyP50SpreadMs: 6,
      healthyP99SpreadMs: 6,
    });
  });

  it('fails the backlog target of a phase whose runs were too short to sample what was owed', () => {
    const { targets } = summarizeWebhookDeliveries(
      { healthy: [{ round: 1, ...phase(Array<number>(100).fill(20), []) }] },
      { createsPerSecond: 100, receivers: 3 },
    );

    expect(targets.find(({ name }: { name: string }) => /owed/.test(name))).toMatchObject({
      value: undefined,
      met: false,
    });
  });

  it('holds each phase to a p99 of 1 s, to under a second of deliveries owed over the second half of every run, and to no missing delivery', () => {
    const { targets } = summarizeWebhookDeliveries(
      {
        healthy: [{ round: 1, ...phase(Array<number>(100).fill(20), [10, 10, 10, 10]) }],
        withDown: [
          { round: 1, ...phase(Array<number>(100).fill(20), [10, 10, 10, 10]) },
          {
            round: 2,
            ...phase(Array<number>(100).fill(1200), [10, 10, 200, 301], {
              missing: 3,
              down: { pendingDeliveries: 100, reason: 'connection refused' },
            }),
          },
        ],
      },
      { createsPerSecond: 100, receivers: 3 },
    );

    expect(targets.map(({ name, met }: { name: string; met: boolean }) => [name, met])).toEqual([
      ['healthy: commit to first delivery, p99 from the create sent', true],
      ['healthy: deliveries owed, largest over the second half', true],
      ['healthy: creates not answered 201', true],
      ['healthy: deliveries that never arrived', true],
      ['withDown: commit to first delivery, p99 from the create sent', false],
      ['withDown: deliveries owed, largest over the second half', false],
      ['withDown: creates not answered 201', true],
      ['withDown: deliveries that never arrived', false],
    ]);
  });
});
