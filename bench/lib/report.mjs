// Totals and medians over the slices of a run, per-slice-pair ratios, and the targets of docs/performance.md ("Targets") checked against them.

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * One contender's slices of one scenario: requests and errors summed, latency percentiles of all
 * their requests together. wrk reports every 0.1 % quantile of a slice; each stands for an equal
 * share of that slice's requests, so pooled they approximate the whole distribution. (autocannon
 * reports only p50 and p99: then the median slice's.)
 */
export function combine(slices) {
  const requests = slices.reduce((sum, l) => sum + l.requests, 0);
  const seconds = slices.reduce((sum, l) => sum + l.requests / l.rps, 0);
  const pooled = slices.every((l) => l.quantilesMs?.length > 0);
  const percentile = (p, field) =>
    pooled ? pooledPercentile(slices, p) : median(slices.map((l) => l[field]));
  return {
    rps: requests / seconds,
    p50Ms: percentile(50, 'p50Ms'),
    p99Ms: percentile(99, 'p99Ms'),
    errors: slices.reduce((sum, l) => sum + l.errors, 0),
  };
}

function pooledPercentile(slices, p) {
  const points = slices
    .flatMap((l) => l.quantilesMs.map((ms) => [ms, l.requests / l.quantilesMs.length]))
    .sort((a, b) => a[0] - b[0]);
  const total = points.reduce((sum, [, weight]) => sum + weight, 0);
  let seen = 0;
  for (const [ms, weight] of points) {
    seen += weight;
    if (seen >= (total * p) / 100 - 1e-9) return ms;
  }
  return points[points.length - 1][0];
}

export function summarize(runs, scenarioNames, { pg, scale, connections }) {
  const byContender = (name) => runs.filter((run) => run.contender === name);
  const contenders = {};
  for (const name of new Set(runs.map((run) => run.contender))) {
    const own = byContender(name);
    contenders[name] = {
      coldStartMs: median(own.map((run) => run.coldStartMs)),
      peakRssMb: Math.max(...own.map((run) => run.peakRssMb)),
      scenarios: Object.fromEntries(
        scenarioNames.map((scenario) => [
          scenario,
          combine(own.flatMap((run) => run.scenarios[scenario])),
        ]),
      ),
    };
  }

  const service = byContender('service');
  const reference = byContender('reference');
  const ratios =
    reference.length === 0 ? undefined : pairedRatios(service, reference, scenarioNames);
  // With --against: the service (the working tree) over the build of another revision.
  const before = byContender('before');
  const againstBefore =
    before.length === 0 ? undefined : pairedRatios(service, before, scenarioNames);
  // With --observability: the service with metrics on, and with tracing on, over the service with
  // both off.
  const observability = byContender('metrics').length
    ? {
        metrics: pairedRatios(byContender('metrics'), service, scenarioNames),
        tracing: pairedRatios(byContender('tracing'), service, scenarioNames),
      }
    : undefined;
  // With --streams: the service with that many event streams open over the service with none.
  const withStreams = byContender('streams');
  const streams =
    withStreams.length === 0
      ? undefined
      : streamsCost(withStreams, service, contenders, scenarioNames);
  // With --webhooks: the service with webhooks subscribed over the service with none.
  const withWebhooks = byContender('webhooks');
  const webhooks =
    withWebhooks.length === 0 ? undefined : webhooksCost(withWebhooks, service, scenarioNames);
  const deepOverPage1 = scale
    ? median(
        service.map((run) => combine(run.scenarios.deep).p50Ms / combine(run.scenarios.list).p50Ms),
      )
    : undefined;
  const catalogue =
    scale && CATALOGUE_SCENARIOS.every((name) => scenarioNames.includes(name))
      ? catalogueFigures(service)
      : undefined;

  const targets = [];
  const check = checker(targets);
  for (const [scenario, ratio] of Object.entries(ratios ?? {})) {
    const line = { ...REFERENCE_LINES, ...OWN_REFERENCE_LINES[scenario] };
    check(`${scenario} req/s, service/reference`, ratio.rps, '≥', line.rps);
    check(
      `${scenario} p99 at ${connections} connections, service/reference`,
      ratio.p99,
      '≤',
      line.p99,
    );
  }
  // The writes are what a change to the service usually costs (docs/performance.md, "Targets").
  for (const scenario of BEFORE_TARGETS.filter((name) => againstBefore?.[name]))
    check(`${scenario} req/s, service/before`, againstBefore[scenario].rps, '≥', 0.9);
  for (const [scenario, ratio] of Object.entries(observability?.metrics ?? {}))
    check(`${scenario} req/s, metrics on / off`, ratio.rps, '≥', 0.95);
  if (streams) {
    const open = `${streams.count.toLocaleString('en')} streams open`;
    for (const [scenario, ratio] of Object.entries(streams.ratios))
      check(`${scenario} req/s, ${open} / none`, ratio.rps, '≥', 0.9);
    check(`RSS with ${open} − before them`, streams.rssMb, '≤', 100, ' MB');
    check(`peak RSS under load, ${open} − none`, streams.peakRssMb, '≤', 100, ' MB');
    check('streams the server ended before the round did', streams.endedEarly, '≤', 0);
  }
  for (const [scenario, ratio] of Object.entries(webhooks?.ratios ?? {}))
    check(`${scenario} req/s, with webhooks / none`, ratio.rps, '≥', 0.85);
  if (scale) check('deep page p50 / page 1 p50', deepOverPage1, '≤', 1.3);
  if (catalogue) {
    check('category deep page p50 / its page 1 p50', catalogue.deepOverPage1, '≤', 1.3);
    check('category page req/s / list req/s', catalogue.categoryOverList, '≥', 0.9);
    check('category+status page req/s / list req/s', catalogue.categoryStatusOverList, '≥', 0.9);
    check('getInventory p99', catalogue.inventoryP99Ms, '≤', 50, ' ms');
  }
  check('service peak RSS under load', contenders.service.peakRssMb, '≤', 200, ' MB');
  if (!pg)
    check(
      'service cold start to /health/ready (SQLite)',
      contenders.service.coldStartMs,
      '≤',
      1500,
      ' ms',
    );
  const errors = runs
    .flatMap((run) => Object.values(run.scenarios).flat())
    .reduce((sum, slice) => sum + slice.errors, 0);
  check('errors (non-2xx, socket errors, timeouts)', errors, '≤', 0);

  return {
    contenders,
    ratios,
    againstBefore,
    observability,
    streams,
    webhooks,
    deepOverPage1,
    catalogue,
    targets,
  };
}

/** Every scenario against the reference: req/s at least, p99 at most (docs/performance.md, "Targets"). */
const REFERENCE_LINES = { rps: 0.6, p99: 2.0 };
/** Scenarios held to lines of their own against the reference. */
const OWN_REFERENCE_LINES = {
  deletePet: { rps: 0.7 },
  putCategory: { rps: 0.7 },
  createOrder: { rps: 0.7, p99: 1.5 },
  completeOrder: { rps: 0.7, p99: 1.5 },
};

/** --scale's scenarios of the catalogue: their figures are reported when all of them ran. */
const CATALOGUE_SCENARIOS = ['category', 'categoryStatus', 'categoryDeep', 'inventory'];

/**
 * --scale's catalogue figures: the category's deep page over its first (p50, a ratio per round,
 * then the median over rounds); the filtered pages' throughput over the unfiltered list's, a ratio
 * per slice pair (slice i of each, taken in the same turn: bench/run.mjs), then the median over
 * every pair of the run, as between contenders; getInventory's p99, the median over rounds.
 */
function catalogueFigures(service) {
  const p50Over = (a, b) =>
    median(service.map((run) => combine(run.scenarios[a]).p50Ms / combine(run.scenarios[b]).p50Ms));
  const rpsOver = (a, b) =>
    median(
      service.flatMap((run) =>
        run.scenarios[a].map((s, slice) => s.rps / run.scenarios[b][slice].rps),
      ),
    );
  return {
    deepOverPage1: p50Over('categoryDeep', 'category'),
    categoryOverList: rpsOver('category', 'list'),
    categoryStatusOverList: rpsOver('categoryStatus', 'list'),
    inventoryP99Ms: median(service.map((run) => combine(run.scenarios.inventory).p99Ms)),
  };
}

/**
 * What the webhooks cost the runs that had them: throughput against the service without, and how
 * long their deliveries took to catch up after a slice (median and largest over every slice).
 */
function webhooksCost(withWebhooks, service, scenarioNames) {
  const drains = withWebhooks.flatMap(({ webhooks }) => webhooks.drainMs);
  return {
    ratios: pairedRatios(withWebhooks, service, scenarioNames),
    drainMs: { median: median(drains), max: Math.max(...drains) },
    receivers: withWebhooks.map(({ webhooks }) => webhooks.receivers),
  };
}

/**
 * --webhooks' delivery timing, for the receivers alone and with one down, each phase timed
 * --delivery-rounds times: percentiles from the create sent and answered to the first delivery
 * (over all of a phase's runs, and per run), the deliveries owed over the second half of each run,
 * and what did not arrive. What the down receiver costs the others is the withDown phase's p50
 * and p99 against the healthy phase's; the spread of the healthy runs' own p50s is how much of
 * that a run's noise alone makes.
 */
export function summarizeWebhookDeliveries(phases, { createsPerSecond, receivers }) {
  const summary = Object.fromEntries(
    Object.entries(phases).map(([phase, runs]) => [phase, summarizePhase(runs)]),
  );
  const targets = [];
  const check = checker(targets);
  for (const [phase, s] of Object.entries(summary)) {
    check(
      `${phase}: commit to first delivery, p99 from the create sent`,
      s.fromSentMs.p99,
      '≤',
      1000,
      ' ms',
    );
    // Flat: never a second's deliveries behind over the second half of any run.
    check(
      `${phase}: deliveries owed, largest over the second half`,
      s.owedSecondHalfMax,
      '≤',
      createsPerSecond * receivers,
    );
    check(`${phase}: creates not answered 201`, s.sent - s.created, '≤', 0);
    check(`${phase}: deliveries that never arrived`, s.missing, '≤', 0);
  }
  const { healthy, withDown } = summary;
  const downCost = healthy &&
    withDown && {
      p50Ms: withDown.fromSentMs.p50 - healthy.fromSentMs.p50,
      p99Ms: withDown.fromSentMs.p99 - healthy.fromSentMs.p99,
      healthyP50SpreadMs: spread(healthy.runs.map((run) => run.fromSentMs.p50)),
      healthyP99SpreadMs: spread(healthy.runs.map((run) => run.fromSentMs.p99)),
    };
  return { ...summary, downCost, targets };
}

function summarizePhase(runs) {
  const sum = (field) => runs.reduce((total, run) => total + field(run), 0);
  const halves = runs.map((run) => {
    const half = Math.floor(run.owedSamples.length / 2);
    return { first: run.owedSamples.slice(0, half), second: run.owedSamples.slice(half) };
  });
  return {
    fromSentMs: percentiles(runs.flatMap((run) => run.fromSentMs)),
    fromAnswerMs: percentiles(runs.flatMap((run) => run.fromAnswerMs)),
    runs: runs.map((run) => ({ round: run.round, fromSentMs: percentiles(run.fromSentMs) })),
    createsPerSecond: sum((run) => run.createsPerSecond) / runs.length,
    sent: sum((run) => run.sent),
    created: sum((run) => run.created),
    owed: sum((run) => run.owed),
    missing: sum((run) => run.missing),
    repeated: sum((run) => run.deliveries - (run.owed - run.missing)),
    owedFirstHalfMax: largest(halves.flatMap((half) => half.first)),
    owedSecondHalfP50: percentiles(halves.flatMap((half) => half.second)).p50,
    // Undefined, failing its target, when a run was too short to sample.
    owedSecondHalfMax: largest(halves.flatMap((half) => half.second)),
    down: runs.map((run) => run.down).filter(Boolean),
  };
}

function largest(values) {
  return values.length === 0 ? undefined : Math.max(...values);
}

function spread(values) {
  return values.length < 2 ? undefined : Math.max(...values) - Math.min(...values);
}

export function printWebhookDeliveries({ setup, webhookSummary }) {
  const fixed = (n) => n?.toFixed(1) ?? '-';
  const ms = ({ p50, p99, max }) => [p50, p99, max].map(fixed).join(' / ');
  const phases = ['healthy', 'withDown'];
  const row = (label, value) => [label, ...phases.map((phase) => value(webhookSummary[phase]))];
  const table = [
    ['measurement', ...phases],
    row('creates/s sent, mean of the runs', (s) =>
      Math.round(s.createsPerSecond).toLocaleString('en'),
    ),
    row('first delivery from create sent: p50 / p99 / max ms', (s) => ms(s.fromSentMs)),
    row('first delivery from create answered: p50 / p99 / max ms', (s) => ms(s.fromAnswerMs)),
    row('each run, from create sent: p50 / p99 ms', (s) =>
      s.runs.map((run) => `${fixed(run.fromSentMs.p50)} / ${fixed(run.fromSentMs.p99)}`).join(', '),
    ),
    row('owed, first halves: max', (s) => `${s.owedFirstHalfMax ?? '-'}`),
    row(
      'owed, second halves: p50 / max',
      (s) => `${s.owedSecondHalfP50 ?? '-'} / ${s.owedSecondHalfMax ?? '-'}`,
    ),
    row('creates sent / answered 201', (s) => `${s.sent} / ${s.created}`),
    row('deliveries owed / missing / repeated', (s) => `${s.owed} / ${s.missing} / ${s.repeated}`),
    row('the down webhook: pending / last failure', (s) =>
      s.down.length > 0
        ? s.down.map((d) => `${d.pendingDeliveries} / ${d.reason}`).join(', ')
        : '-',
    ),
  ];
  const { downCost } = webhookSummary;
  const signed = (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(1)}` : '-');
  const noise =
    downCost.healthyP50SpreadMs === undefined
      ? ' (one healthy run: no spread to compare with; --delivery-rounds 2 or more gives one)'
      : `; the healthy runs' own spread: p50 ${fixed(downCost.healthyP50SpreadMs)}, p99 ${fixed(downCost.healthyP99SpreadMs)} ms`;
  process.stdout.write(
    `${[
      '',
      `webhook deliveries: ${setup.createsPerSecond} creates/s for ${setup.deliverySeconds} s, ` +
        `${setup.deliveryRounds} run(s) of each phase, ` +
        `${setup.webhookReceivers} receivers subscribed to every event (withDown: and a webhook whose ` +
        `receiver refuses connections; retry schedule ${setup.retrySchedule}); owed sampled each second`,
      '',
      ...formatTable(table),
      '',
      `the down receiver's cost to the others, withDown − healthy: p50 ${signed(downCost.p50Ms)}, ` +
        `p99 ${signed(downCost.p99Ms)} ms${noise}`,
      ...targetLines(webhookSummary.targets),
    ].join('\n')}\n`,
  );
}

/**
 * What the streams cost the runs that held them open: throughput against the service without
 * them, the change of resident memory and heap in the same process when they opened (median over
 * rounds), and the difference of the two processes' peak RSS under the same load.
 */
function streamsCost(withStreams, service, contenders, scenarioNames) {
  const change = (field) =>
    median(
      withStreams.map(({ openStreams }) => openStreams.with[field] - openStreams.before[field]),
    );
  return {
    count: withStreams[0].openStreams.count,
    ratios: pairedRatios(withStreams, service, scenarioNames),
    rssMb: change('rssMb'),
    heapUsedMb: change('heapUsedMb'),
    heapTotalMb: change('heapTotalMb'),
    peakRssMb: contenders.streams.peakRssMb - contenders.service.peakRssMb,
    endedEarly: withStreams.reduce((sum, run) => sum + run.openStreams.endedEarly, 0),
  };
}

/** A function that checks a value against its target and adds the outcome to `targets`. */
export function checker(targets) {
  return (name, value, op, limit, unit = '') =>
    targets.push({
      name,
      value,
      target: `${op} ${limit}${unit}`,
      met: op === '≥' ? value >= limit : value <= limit,
    });
}

/** Scenarios --against holds to ≥ 0.90 of the build before: createPet and updatePet. */
const BEFORE_TARGETS = ['create', 'patch'];

/**
 * Throughput: a ratio per slice pair (the two measured back to back, seconds apart), then the
 * median over every pair of the run. p99: a ratio per round, each side's p99 over all its slices
 * of the round (a 2 s slice holds too few requests for a steady p99).
 */
export function pairedRatios(numerator, denominator, scenarioNames) {
  return Object.fromEntries(
    scenarioNames.map((scenario) => {
      const pairs = numerator.flatMap((run, i) =>
        run.scenarios[scenario].map((s, slice) => [s, denominator[i].scenarios[scenario][slice]]),
      );
      return [
        scenario,
        {
          pairs: pairs.length,
          rps: median(pairs.map(([a, b]) => a.rps / b.rps)),
          p99: median(
            numerator.map(
              (run, i) =>
                combine(run.scenarios[scenario]).p99Ms /
                combine(denominator[i].scenarios[scenario]).p99Ms,
            ),
          ),
        },
      ];
    }),
  );
}

/** Events a follower reads per second, at the least, on each engine (docs/performance.md, "Targets"). */
const FOLLOWER_EVENTS_PER_SECOND = { sqlite: 20_000, postgres: 10_000 };
/** A commit reaches every open stream within about a second (docs/events.md, "The stream"). */
const STREAM_P99_MS = 1_000;

/**
 * --events: the follower's events/s, the median over rounds; the stream's latencies, percentiles
 * of every event of every round together; and the events the stream missed or repeated.
 */
export function summarizeEvents(rounds, { pg }) {
  const latencies = (field) => rounds.flatMap((round) => round.stream[field]);
  const total = (field) => rounds.reduce((sum, round) => sum + round.stream[field], 0);
  const summary = {
    followerEventsPerSecond: median(rounds.map((round) => round.follower.eventsPerSecond)),
    fromSentMs: percentiles(latencies('fromSentMs')),
    fromAnswerMs: percentiles(latencies('fromAnswerMs')),
    createsPerSecond: median(rounds.map((round) => round.stream.createsPerSecond)),
    sent: total('sent'),
    created: total('created'),
    arrived: total('arrived'),
    repeated: total('repeated'),
  };
  const targets = [];
  const check = checker(targets);
  check(
    'follower events/s',
    summary.followerEventsPerSecond,
    '≥',
    FOLLOWER_EVENTS_PER_SECOND[pg ? 'postgres' : 'sqlite'],
  );
  check(
    `commit to a stream on ${pg ? 'another' : 'the same'} instance, p99 from the create sent`,
    summary.fromSentMs.p99,
    '≤',
    STREAM_P99_MS,
    ' ms',
  );
  check('creates not answered 201', summary.sent - summary.created, '≤', 0);
  check('events the stream missed', summary.created - summary.arrived, '≤', 0);
  check('events the stream sent twice', summary.repeated, '≤', 0);
  return { ...summary, targets };
}

/** Nearest-rank p50 and p99, and the largest value. */
function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p) => sorted[Math.max(0, Math.ceil((sorted.length * p) / 100) - 1)];
  return { p50: rank(50), p99: rank(99), max: sorted.at(-1) };
}

export function printEventsReport({ setup, machine, runs, summary }) {
  const ms = ({ p50, p99, max }) => [p50, p99, max].map((n) => n.toFixed(1)).join(' / ');
  const perRound = (value) => runs.map(value).join('; ');
  const count = (n) => Math.round(n).toLocaleString('en');
  const table = [
    ['measurement', 'all rounds', 'per round'],
    [
      `follower events/s (limit=${setup.followerPage})`,
      count(summary.followerEventsPerSecond),
      perRound((round) => count(round.follower.eventsPerSecond)),
    ],
    [
      'stream, from create sent: p50 / p99 / max ms',
      ms(summary.fromSentMs),
      perRound((round) => ms(percentiles(round.stream.fromSentMs))),
    ],
    [
      'stream, from create answered: p50 / p99 / max ms',
      ms(summary.fromAnswerMs),
      perRound((round) => ms(percentiles(round.stream.fromAnswerMs))),
    ],
    [
      'creates/s sent',
      count(summary.createsPerSecond),
      perRound((round) => count(round.stream.createsPerSecond)),
    ],
    [
      'creates sent / answered 201 / their events streamed',
      [summary.sent, summary.created, summary.arrived].map(count).join(' / '),
      perRound(({ stream }) => [stream.sent, stream.created, stream.arrived].join(' / ')),
    ],
  ];
  const out = [
    '',
    `${machine.cpuModel} ×${machine.cpus}, Node ${machine.node}; ${setup.engine}, ` +
      `${setup.eventRows.toLocaleString('en')} events seeded; ${setup.rounds} rounds on fresh servers, each: ` +
      `a follower reading the whole feed, then ${setup.createsPerSecond} creates/s for ${setup.seconds} s ` +
      `on \`service\` with a stream open on \`${setup.streamOn}\`, each after up to ${setup.warmup} s ` +
      `of the same unmeasured; ${setup.pinning}`,
    '',
    ...formatTable(table),
    ...targetLines(summary.targets),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

export function printReport({ setup, machine, summary }) {
  const {
    contenders,
    ratios,
    againstBefore,
    observability,
    streams,
    webhooks,
    deepOverPage1,
    targets,
  } = summary;
  const out = [];
  out.push(
    '',
    `${machine.cpuModel} ×${machine.cpus}, Node ${machine.node}; ${setup.engine}, ${setup.rows.toLocaleString('en')} pets; ` +
      `${setup.rounds} rounds × ${setup.seconds} s per scenario and contender, in ${setup.slice} s slices taken in turns, after ${setup.warmup} s warm-up; ` +
      `${setup.connections} connections via ${setup.loadGenerator}; ${setup.pinning}` +
      (setup.against
        ? `; before = ${setup.against.rev} (${setup.against.commit.slice(0, 12)})`
        : '') +
      (streams ? `; ${streams.count.toLocaleString('en')} event streams open on \`streams\`` : ''),
    '',
  );

  const names = Object.keys(contenders);
  const header = ['scenario', ...names.flatMap((n) => [`${n} req/s`, `${n} p50/p99 ms`])];
  if (ratios) header.push('req/s ratio', 'p99 ratio');
  if (againstBefore) header.push('req/s service/before', 'p99 service/before');
  if (streams) header.push('req/s streams/service', 'p99 streams/service');
  if (webhooks) header.push('req/s webhooks/service', 'p99 webhooks/service');
  const table = [header];
  for (const scenario of Object.keys(contenders.service.scenarios)) {
    const row = [scenario];
    for (const name of names) {
      const s = contenders[name].scenarios[scenario];
      row.push(
        Math.round(s.rps).toLocaleString('en'),
        `${s.p50Ms.toFixed(2)} / ${s.p99Ms.toFixed(2)}`,
      );
    }
    for (const paired of [ratios, againstBefore, streams?.ratios, webhooks?.ratios].filter(Boolean))
      row.push(paired[scenario].rps.toFixed(2), paired[scenario].p99.toFixed(2));
    table.push(row);
  }
  table.push([
    'cold start ms',
    ...names.flatMap((n) => [Math.round(contenders[n].coldStartMs).toString(), '']),
  ]);
  table.push([
    'peak RSS MB',
    ...names.flatMap((n) => [Math.round(contenders[n].peakRssMb).toString(), '']),
  ]);
  out.push(...formatTable(table));
  if (deepOverPage1 !== undefined)
    out.push('', `deep page p50 / page 1 p50: ${deepOverPage1.toFixed(2)}`);
  for (const [feature, byScenario] of Object.entries(observability ?? {}))
    out.push(
      '',
      `${feature} on / off, req/s (p99): ${Object.entries(byScenario)
        .map(([scenario, r]) => `${scenario} ${r.rps.toFixed(2)} (${r.p99.toFixed(2)})`)
        .join(', ')}`,
    );

  if (streams)
    out.push(
      '',
      `memory when ${streams.count.toLocaleString('en')} streams opened (median over rounds): ` +
        `RSS ${signed(streams.rssMb)} MB, heap used ${signed(streams.heapUsedMb)} MB, ` +
        `heap total ${signed(streams.heapTotalMb)} MB; peak RSS streams − service ${signed(streams.peakRssMb)} MB`,
    );
  if (webhooks)
    out.push(
      '',
      `webhooks catching up after a slice: median ${Math.round(webhooks.drainMs.median)} ms, ` +
        `largest ${Math.round(webhooks.drainMs.max)} ms; receivers at the end of each round ` +
        `(deliveries / distinct events): ${webhooks.receivers
          .map((round) => round.map((r) => `${r.deliveries}/${r.events}`).join(' '))
          .join('; ')}`,
    );
  out.push(...targetLines(targets));
  process.stdout.write(`${out.join('\n')}\n`);
}

function signed(mb) {
  return `${mb >= 0 ? '+' : ''}${mb.toFixed(1)}`;
}

export function targetLines(targets) {
  return [
    '',
    'targets:',
    ...targets.map((t) => {
      const value = Number.isInteger(t.value) ? t.value : t.value.toFixed(2);
      return `  ${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${value} (target ${t.target})`;
    }),
  ];
}

export function formatTable(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)));
  const line = (r) => `| ${r.map((cell, c) => String(cell ?? '').padEnd(widths[c])).join(' | ')} |`;
  return [
    line(rows[0]),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ];
}
