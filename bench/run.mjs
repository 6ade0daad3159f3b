// npm run bench -- [--rows N] [--pg URL] [--scale] [--observability] [--against REV] [--cluster] [--events] [--event-rows N] [--creates-per-second N] [--streams N] [--webhooks] [--delivery-seconds S] [--delivery-rounds N] [--sweep] [--lapsed N] [--scenarios a,b] [--rounds N] [--seconds S] [--slice S] [--warmup S] [--connections C] [--node PATH]
//
// Races the real service against bench/reference (same API on bare Fastify + better-sqlite3, or `pg`
// with prepared statements under --pg). Both
// run at once, idle but for the one under load, and take turns in short slices (A B B A A B …), so
// each service/reference ratio compares two measurements taken seconds apart: a shared VM's speed
// drifts by tens of percent over a minute, and ratios of runs minutes apart would measure the drift.
// Reports medians of those per-slice ratios.
// --pg races them on PostgreSQL (one database, both writing to it; --against gives the other build a
// copy of its own, so neither hears the other's NOTIFY); --scale compares a deep page
// with page 1, and the catalogue's pages with the list, on the service alone, its scenarios taking
// turns in slices as contenders do;
// --observability races the service against itself with metrics on and with tracing on;
// --against REV races the service (the working tree) against the build of git revision REV
// (contender `before`), built in a git worktree in the system's temp directory and kept there for
// the next run (its own `npm ci` unless its package-lock.json is this one's);
// --cluster measures the service on `npm run cluster`'s topology (bench/cluster.mjs).
// --events measures the change feed and the event stream (docs/events.md) on the service alone: a
// follower paging a feed of --event-rows seeded events, and the time from a create to its event on
// a stream, at --creates-per-second, on another instance (PostgreSQL) or the same one (SQLite).
// --streams N races the service with N event streams open against the service with none (list
// and get), and reads what the streams cost its memory. Both contenders serve N streams and close
// them before the warm-up, so the race measures streams held open, not a warm process's first
// stream (docs/performance.md, "Event streams held open").
// --webhooks races the service with three webhooks subscribed to every event, their receivers on
// loopback, against the service with none (createPet), letting the webhooks' deliveries catch up
// after each of its slices; then times deliveries: pets created at --creates-per-second for
// --delivery-seconds, commit to first delivery and the deliveries owed each second, with the three
// receivers alone and with a fourth webhook whose receiver is down; --delivery-rounds times each
// of the two that many times, alternating which goes first.
// --sweep races createPet on `sweeping`, whose own database holds --lapsed pets held by open orders,
// against `service`, whose database holds none: both warmed, then the holds lapse and slices run in
// turns until the expiry sweep has expired them all, `sweeping` stopped outside its own slices (both
// share CPU 0); reports the sweep's expiries per second of `sweeping`'s running time, and fails
// unless every order ended expired and every pet available (lib/sweep.mjs).
// --scenarios names the scenarios to run (default: all of the mode's; with --against, all but
// NEWER_OPERATIONS, which an earlier build may not have), e.g. create,patch.
// Writes that use a row up take it from a pool of their own, seeded after the pets the reads see:
// deletePet removes the next pet, createOrder holds the next available pet, completeOrder completes
// the next open order, seeded as createOrder stores one, its pet pending (lib/data.mjs).
// --node runs the whole bench (seeding, service, reference) on that node binary instead of the one
// running npm; on Node 20, better-sqlite3-node20 must be built for it (docs/performance.md,
// "Running the bench").
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { copyPostgres, prepareSqlite, preparePostgres } from './lib/data.mjs';
import {
  followFeed,
  holdStreams,
  holdWebhookReceivers,
  measureStreamLatency,
  measureWebhookLatency,
} from './lib/event-clients.mjs';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { pinning } from './lib/cpu.mjs';
import {
  printEventsReport,
  printReport,
  printWebhookDeliveries,
  summarize,
  summarizeEvents,
  summarizeWebhookDeliveries,
} from './lib/report.mjs';
import { inTurn, readMetrics, startOtlpSink, startServer } from './lib/servers.mjs';
import { printSweepReport, runSweepRound, summarizeSweep } from './lib/sweep.mjs';
import { pendingDeliveries } from './lib/webhook-receivers.mjs';
import { runClusterBench } from './cluster.mjs';
import { serverNodeArgs } from '../scripts/start-command.mjs';

const { values: opts, tokens } = parseArgs({
  tokens: true,
  options: {
    rows: { type: 'string', default: '10000' },
    pg: { type: 'string' },
    scale: { type: 'boolean', default: false },
    observability: { type: 'boolean', default: false },
    against: { type: 'string' },
    cluster: { type: 'boolean', default: false },
    events: { type: 'boolean', default: false },
    'event-rows': { type: 'string', default: '100000' },
    'creates-per-second': { type: 'string', default: '200' },
    streams: { type: 'string' },
    webhooks: { type: 'boolean', default: false },
    'delivery-seconds': { type: 'string', default: '60' },
    'delivery-rounds': { type: 'string', default: '1' },
    sweep: { type: 'boolean', default: false },
    lapsed: { type: 'string', default: '100000' },
    scenarios: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    slice: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    node: { type: 'string' },
  },
});
if (opts.node) runUnder(opts.node);
const rows = positiveInteger('--rows', opts.rows, 100);
const rounds = positiveInteger('--rounds', opts.rounds, 1);
const seconds = positiveInteger('--seconds', opts.seconds, 1);
const slice = Math.min(positiveInteger('--slice', opts.slice, 1), seconds);
const warmup = positiveInteger('--warmup', opts.warmup, 0);
const connections = positiveInteger('--connections', opts.connections, 1);
const eventRows = positiveInteger('--event-rows', opts['event-rows'], 1);
const createsPerSecond = positiveInteger('--creates-per-second', opts['creates-per-second'], 2);
// The bench has one key, and EVENT_STREAMS_PER_KEY lets a key open at most 1,000 streams on one
// instance.
const streams =
  opts.streams === undefined ? 0 : positiveInteger('--streams', opts.streams, 1, 1000);
const chosenScenarios = opts.scenarios?.split(',');
const deliverySeconds = positiveInteger('--delivery-seconds', opts['delivery-seconds'], 1);
const deliveryRounds = positiveInteger('--delivery-rounds', opts['delivery-rounds'], 1);
const lapsed = positiveInteger('--lapsed', opts.lapsed, 1);
const engine = opts.pg ? 'postgres' : 'sqlite';
const modes = [
  'scale',
  'observability',
  'against',
  'cluster',
  'events',
  'streams',
  'webhooks',
  'sweep',
].filter((mode) => opts[mode] !== undefined && opts[mode] !== false);
if (modes.length > 1) {
  process.stderr.write(`${modes.map((mode) => `--${mode}`).join(' and ')}: one at a time\n`);
  process.exit(2);
}
// Checked before anything is built: a mistyped revision fails at once.
const againstCommit = opts.against === undefined ? undefined : resolveCommit(opts.against);

if (opts.cluster) {
  const result = {
    startedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version },
    setup: { cluster: true, seconds, connections, loadGenerator },
    ...(await runClusterBench({ seconds, connections, kills: 3 })),
  };
  writeResult(result);
  process.exit(0);
}

// The service runs exactly as `npm start` runs it (node flags included), minus the build step.
const serviceNodeArgs = serverNodeArgs();
/** Pets only the patch scenario touches: far more than connections, so no two patch one pet at once. */
const PATCH_POOL_SIZE = 1000;
/** Categories only the putCategory scenario renames, as many, for the same reason. */
const CATEGORY_POOL_SIZE = 1000;
/**
 * deletePet, createOrder and completeOrder use up a row of their pool with every request (a pet
 * removed, a pet held, an order closed), so each pool holds this many per second of such load its
 * database takes in the run: above the fastest contender's rate on the engine.
 */
const USES_PER_SECOND = opts.pg ? 6_000 : 12_000;
/** Scenarios of operations an earlier build may not have: --against runs them only when named. */
const NEWER_OPERATIONS = ['deletePet', 'putCategory', 'createOrder', 'completeOrder'];
/** --events: the follower's page size, the largest listEvents allows. */
const FOLLOWER_PAGE = 100;
/**
 * --streams: memory is read after the server has been idle this long, so the requests that
 * opened the streams, and the load before them, have been answered.
 */
const MEMORY_SETTLE_MS = 2_000;
/** --webhooks: the receivers each webhook contender's webhooks deliver to. */
const WEBHOOK_RECEIVERS = 3;
/** --webhooks: how often a drain asks whether the webhooks have caught up. */
const DRAIN_POLL_MS = 100;
// Ports below the kernel's ephemeral range (32768+), where a client socket could already hold them.
const CONTENDERS = {
  service: { nodeArgs: serviceNodeArgs, port: 31100 },
  reference: { nodeArgs: ['bench/reference/server.mjs'], port: 31101 },
  metrics: { nodeArgs: serviceNodeArgs, port: 31102, env: { METRICS_PORT: '31103' } },
  // Every request traced (the SDK's default sampler) and exported to a sink in this process.
  tracing: {
    nodeArgs: serviceNodeArgs,
    port: 31104,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: '' },
  },
  // --against: that revision's build, started as its own `npm start` starts it, from its worktree.
  before: { nodeArgs: [], port: 31102 },
  // --streams: the service holding that many event streams open, all on the bench's one key.
  streams: {
    nodeArgs: serviceNodeArgs,
    port: 31102,
    env: { METRICS_PORT: '31103', EVENT_STREAMS_PER_KEY: String(streams) },
  },
  // --webhooks: the service with WEBHOOK_RECEIVERS webhooks subscribed (their database of its own
  // on PostgreSQL, so the service without them sends nothing).
  webhooks: {
    nodeArgs: serviceNodeArgs,
    port: 31102,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  },
  // --webhooks' delivery timing. The retry schedule gives a receiver that is down as many
  // attempts per event within the run as the default schedule gives it within 10 minutes (three).
  deliveries: {
    nodeArgs: serviceNodeArgs,
    port: 31102,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0s,5s,20s' },
  },
  // --sweep: the service with lapsed holds to expire, on a database of its own.
  sweeping: { nodeArgs: serviceNodeArgs, port: 31102 },
  // --events on PostgreSQL: a second instance on the same database, where the stream is open.
  replica: { nodeArgs: serviceNodeArgs, port: 31102 },
};
// --streams reads memory from the metrics: the service without streams has them on too, so the
// two differ in the streams alone; both serve the streams once before the warm-up.
if (streams > 0)
  CONTENDERS.service.env = { METRICS_PORT: '31101', EVENT_STREAMS_PER_KEY: String(streams) };
// --scale is a property of the service alone; so is --events, whose second instance serves the
// stream on PostgreSQL.
const contenders = {
  observability: ['service', 'metrics', 'tracing'],
  scale: ['service'],
  against: ['service', 'before'],
  events: opts.pg ? ['service', 'replica'] : ['service'],
  streams: ['service', 'streams'],
  webhooks: ['service', 'webhooks'],
  sweep: ['service', 'sweeping'],
}[modes[0]] ?? ['service', 'reference'];
const otlpSink = opts.observability ? await startOtlpSink() : undefined;
if (otlpSink) CONTENDERS.tracing.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlpSink.endpoint;

process.stderr.write('building the service…\n');
execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
const against =
  againstCommit === undefined ? undefined : buildRevision(opts.against, againstCommit);
if (against) Object.assign(CONTENDERS.before, { nodeArgs: against.nodeArgs, cwd: against.dir });

const workDir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
// The pools' own pets, after the `rows` the others read: no other scenario sees them change
// (getPet's ETags and 304s stay as they were), and the deep page stays where it was. A pool that
// requests use up outlasts every request its database takes: on PostgreSQL those of every
// contender in every round, warm-up included; on SQLite one server's (each start copies the seed).
const patchPool = { firstId: rows + 1, count: PATCH_POOL_SIZE };
const usedUpSeconds = (warmup + seconds) * (opts.pg ? rounds * contenders.length : 1);
const usedUpPool = () => ({ firstId: 0, count: USES_PER_SECOND * usedUpSeconds });
const deletePool = usedUpPool();
/** createOrder's available pets. */
const orderPetPool = usedUpPool();
/** completeOrder's open orders, ids from 1, each holding one of the pets from `firstPetId` on. */
const openOrderPool = { ...usedUpPool(), firstId: 1, firstPetId: 0 };
const categoryPool = { firstId: 1, count: CATEGORY_POOL_SIZE };
/** The mode's scenarios that run, each request with `key`. */
const pickScenarios = (key) =>
  opts.events
    ? []
    : defineScenarios({
        rows,
        key,
        scale: opts.scale,
        streams: streams > 0,
        patchPool,
        deletePool,
        orderPetPool,
        openOrderPool,
        categoryPool,
      }).filter(({ name }) =>
        chosenScenarios
          ? chosenScenarios.includes(name)
          : opts.webhooks || opts.sweep
            ? name === 'create'
            : !(against && NEWER_OPERATIONS.includes(name)),
      );
// The pools are seeded only for the scenarios that use them, their pets one after the other.
const runsScenario = new Set(pickScenarios('').map(({ name }) => name));
if (!runsScenario.has('deletePet')) deletePool.count = 0;
if (!runsScenario.has('createOrder')) orderPetPool.count = 0;
if (!runsScenario.has('completeOrder')) openOrderPool.count = 0;
deletePool.firstId = patchPool.firstId + PATCH_POOL_SIZE;
orderPetPool.firstId = deletePool.firstId + deletePool.count;
openOrderPool.firstPetId = orderPetPool.firstId + orderPetPool.count;
const seeded = openOrderPool.firstPetId + openOrderPool.count - 1;
const events = opts.events ? eventRows : 0;
const extraPets = [
  `+${PATCH_POOL_SIZE.toLocaleString('en')} for patch`,
  ...[
    [deletePool, 'for deletePet'],
    [orderPetPool, 'available for createOrder'],
    [openOrderPool, "held by completeOrder's open orders"],
  ]
    .filter(([pool]) => pool.count > 0)
    .map(([pool, what]) => `+${pool.count.toLocaleString('en')} ${what}`),
];
process.stderr.write(
  `seeding ${rows.toLocaleString('en')} pets (${extraPets.join(', ')})` +
    `${events ? ` and ${events.toLocaleString('en')} events` : ''} on ${engine}…\n`,
);
const seed = {
  rows: seeded,
  events,
  eventPets: rows,
  categories: runsScenario.has('putCategory') ? categoryPool.count : 0,
  availablePets: orderPetPool,
  openOrders: openOrderPool,
  // The key an earlier build must accept too: the scopes every build has, orders' only for them.
  scopes: opts.webhooks
    ? 'pets:read,pets:write,webhooks:manage'
    : ['createOrder', 'completeOrder'].some((name) => runsScenario.has(name))
      ? 'pets:read,pets:write,orders:write'
      : 'pets:read,pets:write',
};
const data = opts.pg
  ? await preparePostgres({ url: opts.pg, ...seed })
  : prepareSqlite({ dir: workDir, ...seed });
if (opts.webhooks && opts.pg) {
  const own = { DATABASE_URL: await copyPostgres(opts.pg, '_webhooks') };
  for (const contender of ['webhooks', 'deliveries']) Object.assign(CONTENDERS[contender].env, own);
}
// Two builds on one PostgreSQL database would hear each other's NOTIFY and wake for each other's
// commits, on the server's one CPU: the build raced with --against gets a copy of its own.
if (against && opts.pg)
  CONTENDERS.before.env = { DATABASE_URL: await copyPostgres(opts.pg, '_before') };
const scenarios = pickScenarios(data.key);
if (chosenScenarios && scenarios.length !== chosenScenarios.length) {
  process.stderr.write(
    `--scenarios: not all of ${chosenScenarios.join(', ')} are scenarios of this mode\n`,
  );
  process.exit(2);
}
const measuresPatch = scenarios.some((scenario) => scenario.name === 'patch');
if (opts.sweep && scenarios.map((s) => s.name).join() !== 'create') {
  process.stderr.write('--sweep: the load is createPet alone (--scenarios create)\n');
  process.exit(2);
}
const sweepRound = {
  rounds,
  lapsed,
  warmup,
  slice,
  scenario: scenarios[0],
  pg: opts.pg,
  freshCopy: () => data.freshCopy(),
  startContender,
  load,
};
/**
 * How far each scenario with a pool (patch, deletePet, putCategory) has gone through it on each
 * PostgreSQL database, by URL, then by scenario: a load goes on from there, so every request
 * changes (or removes) a row of its own. Contenders that share a database share its counts for
 * the whole run; on SQLite each server start gets a fresh copy.
 */
const poolCursors = new Map();
const poolCursorsOn = (url) => poolCursors.get(url) ?? poolCursors.set(url, {}).get(url);
/** Patch requests sent and pet revisions they made, on each database the run used. */
const patchWrites = [];

const runs = [];
let webhookDeliveries;
try {
  for (let round = 1; round <= rounds; round++) {
    if (opts.sweep) runs.push(...(await runSweepRound(round, sweepRound)));
    else runs.push(...(opts.events ? [await runEventsRound(round)] : await runRound(round)));
  }
  if (opts.webhooks) webhookDeliveries = await timeWebhookDeliveries();
  if (opts.pg && measuresPatch) {
    for (const [url, cursors] of poolCursors) {
      const written = await data.revisionsMade(patchPool, url);
      const sent = cursors.patch?.sent ?? 0;
      patchWrites.push({ database: new URL(url).pathname.slice(1), sent, written });
    }
  }
} catch (error) {
  process.stderr.write(`\nbench failed: ${error.message}\nlogs kept in ${workDir}\n`);
  process.exit(1);
}
rmSync(workDir, { recursive: true, force: true });
otlpSink?.close();

const result = {
  startedAt: new Date().toISOString(),
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version },
  setup: {
    engine,
    rows,
    rounds,
    seconds,
    slice,
    warmup,
    connections,
    loadGenerator,
    pinning,
    scale: opts.scale,
    observability: opts.observability,
    ...(against && { against: { rev: opts.against, commit: against.commit } }),
    ...(opts.events && {
      eventRows,
      followerPage: FOLLOWER_PAGE,
      createsPerSecond,
      streamOn: contenders.at(-1),
    }),
    ...(streams > 0 && { streams }),
    ...(opts.sweep && { lapsed }),
    ...(opts.webhooks && {
      webhookReceivers: WEBHOOK_RECEIVERS,
      createsPerSecond,
      deliverySeconds,
      deliveryRounds,
      retrySchedule: CONTENDERS.deliveries.env.WEBHOOK_RETRY_SCHEDULE,
    }),
  },
  runs,
  summary: opts.events
    ? summarizeEvents(runs, { pg: opts.pg })
    : opts.sweep
      ? summarizeSweep(runs, { pg: opts.pg, connections })
      : summarize(
          runs,
          scenarios.map((s) => s.name),
          { pg: opts.pg, scale: opts.scale, connections },
        ),
  ...(measuresPatch && { patchWrites }),
  ...(webhookDeliveries && {
    webhookDeliveries,
    webhookSummary: summarizeWebhookDeliveries(webhookDeliveries, {
      createsPerSecond,
      receivers: WEBHOOK_RECEIVERS,
    }),
  }),
};
if (opts.events) printEventsReport(result);
else if (opts.sweep) printSweepReport(result);
else printReport(result);
if (webhookDeliveries) printWebhookDeliveries(result);
if (result.patchWrites) {
  const counts = patchWrites.map(
    ({ database, sent, written }) =>
      `${database} ${sent.toLocaleString('en')} sent, ${written.toLocaleString('en')} made`,
  );
  process.stdout.write(`\npatch requests and the revisions they made: ${counts.join('; ')}\n`);
}
writeResult(result);

function writeResult(result) {
  mkdirSync('bench/results', { recursive: true });
  const file = join('bench/results', `${result.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stderr.write(`\nwrote ${file}\n`);
}

/** One round: fresh servers, every scenario warmed on each, then the scenarios measured in turns. */
async function runRound(round) {
  process.stderr.write(`round ${round}/${rounds}: `);
  const servers = [];
  try {
    // Started one after the other, so each cold start has the CPU to itself; in turn by round.
    for (const contender of inTurn(contenders, round))
      servers.push(await startContender(contender, round));
    process.stderr.write(
      servers.map((s) => `${s.contender} ready in ${Math.round(s.coldStartMs)} ms`).join(', '),
    );
    for (const scenario of scenarios)
      for (const server of servers) await expectAnswer(server, scenario.request);
    // --webhooks: subscribed before the warm-up, so the delivery worker's code is warm too.
    const webhookServer = servers.find((server) => server.contender === 'webhooks');
    const receivers =
      webhookServer &&
      (await holdWebhookReceivers({
        origin: webhookServer.origin,
        key: data.key,
        count: WEBHOOK_RECEIVERS,
      }));
    const drainMs = [];
    /** The load on `server` for `seconds`; the webhooks' deliveries caught up after it. */
    const loadAndDrain = async (server, scenario, seconds) => {
      const result = await load(server, scenario, seconds);
      if (server === webhookServer) drainMs.push(await drain(server, receivers));
      return result;
    };
    // --streams: every contender has served the streams' requests, as an instance that serves
    // streaming clients has, so opening them after the warm-up costs no JIT-compiled code.
    if (streams > 0)
      for (const server of servers)
        await (await holdStreams({ origin: server.origin, key: data.key, count: streams })).close();
    // Every code path is warm (JIT-compiled) before any is measured, so no scenario pays for the first.
    for (const scenario of scenarios)
      for (const server of servers) if (warmup > 0) await loadAndDrain(server, scenario, warmup);
    drainMs.length = 0;
    // --streams: opened once the contender is warm, so its memory before them is its steady state.
    const streamsServer = servers.find((server) => server.contender === 'streams');
    const held = streamsServer && (await openStreams(streamsServer));

    const slices = Math.round(seconds / slice);
    const measured = new Map(servers.map((s) => [s, {}]));
    for (const scenario of scenarios)
      for (const server of servers) measured.get(server)[scenario.name] = [];
    const reportRate = (scenario) =>
      process.stderr.write(
        `\n  ${scenario.name}: ${servers.map((s) => `${s.contender} ${rate(measured.get(s)[scenario.name])}/s`).join('  ')}`,
      );
    const measureSlice = async (scenario, i) => {
      // A B, then B A: neither contender always goes first.
      for (const server of inTurn(servers, i + 1))
        measured.get(server)[scenario.name].push(await loadAndDrain(server, scenario, slice));
    };
    // --scale compares scenarios with each other on one process, so they take turns as contenders
    // do (A B C, C B A, …): slice i of each is measured seconds from slice i of the others, on the
    // same VM and the same process, not a scenario's whole run after another's.
    if (opts.scale) {
      for (let i = 0; i < slices; i++)
        for (const scenario of inTurn(scenarios, i + 1)) await measureSlice(scenario, i);
      scenarios.forEach(reportRate);
    } else {
      for (const scenario of scenarios) {
        for (let i = 0; i < slices; i++) await measureSlice(scenario, i);
        reportRate(scenario);
      }
    }
    const openStreamsRun = held && { count: streams, ...held.memory, ...(await held.close()) };
    const webhooksRun = receivers && { drainMs, receivers: await receivers.counts() };
    if (receivers) await unsubscribe(webhookServer, receivers);
    const result = servers.map((server) => ({
      contender: server.contender,
      round,
      coldStartMs: server.coldStartMs,
      peakRssMb: server.peakRssMb(),
      scenarios: measured.get(server),
      ...(server === streamsServer && { openStreams: openStreamsRun }),
      ...(server === webhookServer && { webhooks: webhooksRun }),
    }));
    process.stderr.write(
      `\n  peak RSS ${result.map((r) => `${r.contender} ${Math.round(r.peakRssMb)} MB`).join(', ')}\n`,
    );
    return result;
  } finally {
    for (const server of servers) await server.stop();
  }
}

/**
 * --streams: opens the streams on `server` and keeps them read until `close()`; its memory is
 * read before and with them.
 */
async function openStreams(server) {
  const metricsPort = CONTENDERS.streams.env.METRICS_PORT;
  const before = await idleMemory(metricsPort);
  const held = await holdStreams({ origin: server.origin, key: data.key, count: streams });
  const counted = (await readMetrics(metricsPort)).get('animal_store_event_streams_open');
  if (counted !== streams)
    throw new Error(`${streams} event streams opened, but the server counts ${counted}`);
  const memory = { before, with: await idleMemory(metricsPort) };
  process.stderr.write(
    `\n  ${streams} streams opened: RSS ${memory.before.rssMb.toFixed(1)} → ${memory.with.rssMb.toFixed(1)} MB, ` +
      `heap used ${memory.before.heapUsedMb.toFixed(1)} → ${memory.with.heapUsedMb.toFixed(1)} MB`,
  );
  return { memory, close: held.close };
}

/** The server's resident memory and V8 heap in MB, as its metrics report them after a pause. */
async function idleMemory(metricsPort) {
  await sleep(MEMORY_SETTLE_MS);
  const metrics = await readMetrics(metricsPort);
  const mb = (name) => metrics.get(name) / 2 ** 20;
  return {
    rssMb: mb('process_resident_memory_bytes'),
    heapUsedMb: mb('nodejs_heap_size_used_bytes'),
    heapTotalMb: mb('nodejs_heap_size_total_bytes'),
  };
}

/**
 * --webhooks: waits until `server`'s webhooks have caught up with the load just sent: nothing
 * pending, and the receivers' counts still for one poll (an event committed in the last moments
 * is recorded as owed within one pass, at most 50 ms later). Resolves to the milliseconds it took.
 */
async function drain(server, receivers) {
  const startedAt = performance.now();
  let last;
  for (;;) {
    const pending = await pendingDeliveries(server.origin, data.key);
    const counts = JSON.stringify(await receivers.counts());
    if (pending.every((n) => n === 0) && counts === last) return performance.now() - startedAt;
    last = counts;
    await sleep(DRAIN_POLL_MS);
  }
}

/**
 * --webhooks: deletes the round's webhooks, so none outlives its receivers in a database the next
 * server uses (PostgreSQL), and closes the receivers.
 */
async function unsubscribe(server, receivers) {
  for (const id of receivers.ids) {
    const response = await fetch(`${server.origin}/v1/webhooks/${id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${data.key}` },
    });
    if (response.status !== 204) throw new Error(`DELETE /v1/webhooks/${id}: ${response.status}`);
  }
  await receivers.close();
}

/**
 * --webhooks: deliveries timed on a fresh server, to the receivers alone (healthy) and with a
 * webhook whose receiver is down (withDown); each after --warmup seconds of the same on the same
 * receivers and webhooks, unmeasured. --delivery-rounds times each phase that many times, in the
 * order healthy, withDown, withDown, healthy, …, so neither phase always runs on the database the
 * other has grown; on PostgreSQL every phase writes to the same database.
 */
async function timeWebhookDeliveries() {
  const phases = { healthy: [], withDown: [] };
  for (let round = 1; round <= deliveryRounds; round++) {
    const order = round % 2 === 1 ? ['healthy', 'withDown'] : ['withDown', 'healthy'];
    for (const phase of order) {
      process.stderr.write(`webhook deliveries, ${phase} ${round}/${deliveryRounds}: `);
      const run = await timeWebhookPhase(phase, round);
      phases[phase].push(run);
      const { created, owed, missing } = run;
      process.stderr.write(
        `${created} creates answered 201, ${owed - missing} of ${owed} deliveries arrived\n`,
      );
    }
  }
  return phases;
}

async function timeWebhookPhase(phase, round) {
  const server = await startContender('deliveries', `${phase}-${round}`);
  try {
    const run = await measureWebhookLatency({
      origin: server.origin,
      key: data.key,
      healthy: WEBHOOK_RECEIVERS,
      down: phase === 'withDown',
      createsPerSecond,
      warmupSeconds: warmup,
      seconds: deliverySeconds,
    });
    return { round, ...run };
  } finally {
    await server.stop();
  }
}

/**
 * --events: one round on fresh servers. A follower reads the whole seeded feed from `service`;
 * then pets are created on `service` at --creates-per-second for --seconds while a stream is open
 * on the last contender: `replica` on PostgreSQL, `service` itself on SQLite, whose streams hear
 * only their own process. Each is first done unmeasured for up to --warmup seconds, so neither
 * pays for compiling its code paths.
 */
async function runEventsRound(round) {
  process.stderr.write(`round ${round}/${rounds}: `);
  const servers = [];
  try {
    for (const contender of contenders) servers.push(await startContender(contender, round));
    process.stderr.write(
      servers.map((s) => `${s.contender} ready in ${Math.round(s.coldStartMs)} ms`).join(', '),
    );
    const [writer, streamServer = writer] = servers;
    const feed = { origin: writer.origin, key: data.key, limit: FOLLOWER_PAGE };
    if (warmup > 0) await followFeed({ ...feed, seconds: warmup });
    const follower = await followFeed(feed);
    if (follower.failure) throw new Error(`the follower failed: ${follower.failure}`);
    if (follower.events < eventRows)
      throw new Error(`the follower read ${follower.events} events of the ${eventRows} seeded`);
    process.stderr.write(`\n  follower: ${Math.round(follower.eventsPerSecond)} events/s`);

    const creates = {
      writeOrigin: writer.origin,
      streamOrigin: streamServer.origin,
      key: data.key,
      createsPerSecond,
    };
    if (warmup > 0) await measureStreamLatency({ ...creates, seconds: warmup });
    const stream = await measureStreamLatency({ ...creates, seconds });
    const failures = Object.entries(stream.failures).map(([why, n]) => `${n} × ${why}`);
    process.stderr.write(
      `\n  stream: ${stream.arrived} of ${stream.created} created pets' events arrived` +
        `${failures.length > 0 ? `; creates not answered 201: ${failures.join(', ')}` : ''}\n`,
    );
    return { round, follower, stream };
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** `database`: a SQLite file or PostgreSQL URL of its own, instead of a fresh copy or --pg's. */
async function startContender(contender, round, database) {
  const { nodeArgs, port, cwd, env: own = {} } = CONTENDERS[contender];
  const sqlitePath = opts.pg ? undefined : (database ?? data.freshCopy());
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    DATABASE_URL: opts.pg ? (database ?? opts.pg) : `sqlite:${sqlitePath}`,
    // One key drives thousands of requests a second: any per-key budget would turn the run into
    // a 429 benchmark. The reference has no rate limiter, so the service runs without one too.
    RATE_LIMIT_PER_MINUTE: '0',
    DATABASE_PATH: sqlitePath ?? '',
    ...own,
  };
  const server = await startServer({
    name: contender,
    nodeArgs,
    env,
    port,
    cwd,
    logFile: join(workDir, `${contender}-${round}.log`),
  });
  const poolCursors = sqlitePath ? {} : poolCursorsOn(env.DATABASE_URL);
  return {
    ...server,
    contender,
    poolCursors,
    stop: async () => {
      await server.stop();
      if (!sqlitePath) return;
      if (measuresPatch) {
        const written = await data.revisionsMade(patchPool, sqlitePath);
        const sent = poolCursors.patch?.sent ?? 0;
        patchWrites.push({ database: `${contender} ${round}`, sent, written });
      }
      data.discard(sqlitePath);
    },
  };
}

/**
 * Fails the run unless a scenario that expects a status (the 304s) gets it: wrk counts only
 * statuses over 399 as errors, so a 200 there would pass unnoticed.
 */
async function expectAnswer(server, { method, path, headers, expectStatus }) {
  if (expectStatus === undefined) return;
  const answer = await fetch(`${server.origin}${path.replace('{id}', '1')}`, { method, headers });
  if (answer.status !== expectStatus)
    throw new Error(
      `${server.contender}: ${method} ${path} answered ${answer.status}, not ${expectStatus}`,
    );
}

async function load(server, scenario, duration) {
  const { rotate } = scenario.request;
  const cursor = rotate && (server.poolCursors[scenario.name] ??= { sent: 0 });
  const result = await runLoad({
    ...scenario.request,
    ...(rotate && { rotate: { ...rotate, start: cursor.sent } }),
    origin: server.origin,
    connections,
    seconds: duration,
  });
  if (!rotate) return result;
  cursor.sent += result.sent;
  // Past the end of a pool that requests use up, they would measure 404s.
  if (rotate.usedUp && cursor.sent > rotate.count)
    throw new Error(
      `${scenario.name} sent ${cursor.sent.toLocaleString('en')} requests to a pool of ` +
        `${rotate.count.toLocaleString('en')}: raise USES_PER_SECOND in bench/run.mjs`,
    );
  return result;
}

function rate(slices) {
  const requests = slices.reduce((sum, s) => sum + s.requests, 0);
  return Math.round(requests / (slices.length * slice));
}

function defineScenarios({
  rows,
  key,
  scale,
  streams,
  patchPool,
  deletePool,
  orderPetPool,
  openOrderPool,
  categoryPool,
}) {
  const headers = { Authorization: `Bearer ${key}` };
  // Near the end of the table, yet a full page with a next link: the worst case for OFFSET paging.
  const deepCursor = Buffer.from(`after:${rows - 25}`).toString('base64url');
  const list = { name: 'list', request: { method: 'GET', path: '/v1/pets?limit=20', headers } };
  const deep = {
    name: 'deep',
    request: { method: 'GET', path: `/v1/pets?limit=20&cursor=${deepCursor}`, headers },
  };
  if (scale) return [list, deep, ...catalogueReads({ rows, headers })];
  const get = { method: 'GET', path: '/v1/pets/{id}', maxId: rows };
  // The reads a client makes while others hold streams open.
  if (streams) return [list, { name: 'get', request: { ...get, headers } }];
  // The 304 path (docs/api-design.md, "Conditional requests"): `If-None-Match: *` matches every
  // 200, so each request is read, hashed and answered 304 without a body, as for a client whose
  // held ETag is current.
  const notModified = { ...headers, 'If-None-Match': '*' };
  return [
    list,
    deep,
    { name: 'get', request: { ...get, headers } },
    { name: 'list304', request: { ...list.request, headers: notModified, expectStatus: 304 } },
    { name: 'get304', request: { ...get, headers: notModified, expectStatus: 304 } },
    {
      name: 'create',
      request: {
        method: 'POST',
        path: '/v1/pets',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Bench the beagle', categoryId: 7, status: 'available' }),
      },
    },
    // updatePet's write path (docs/api-design.md, "The pet lifecycle"): a merge patch of the name
    // alone, no status change and no If-Match. Each pet of the pool gets the other of two names
    // on each pass, so every request changes a pet, bumps its revision and commits; a pet is
    // patched again only after the whole pool, so no two requests wait on one row lock.
    {
      name: 'patch',
      request: {
        method: 'PATCH',
        path: '/v1/pets/{id}',
        headers: { ...headers, 'Content-Type': 'application/merge-patch+json' },
        rotate: {
          ...patchPool,
          bodies: [JSON.stringify({ name: 'Bench A' }), JSON.stringify({ name: 'Bench B' })],
        },
      },
    },
    // deletePet (docs/api-design.md, "The catalogue"), no If-Match: each request removes the next
    // pet of its own pool, with its pet.deleted event, so none answers 404.
    {
      name: 'deletePet',
      request: {
        method: 'DELETE',
        path: '/v1/pets/{id}',
        headers,
        rotate: { ...deletePool, usedUp: true },
      },
    },
    // putCategory's rename, no If-Match: each of the pool's categories (seeded as `category <id>`)
    // gets the other of two names of its own on each pass, so every request writes the category
    // and its category.updated event, and no two names collide.
    {
      name: 'putCategory',
      request: {
        method: 'PUT',
        path: '/v1/categories/{id}',
        headers: { ...headers, 'Content-Type': 'application/json' },
        rotate: {
          ...categoryPool,
          bodies: [
            JSON.stringify({ name: 'Bench A {id}' }),
            JSON.stringify({ name: 'Bench B {id}' }),
          ],
        },
      },
    },
    // createOrder (docs/api-design.md, "Orders"): each request holds the next pet of its own pool
    // of available pets, for a day so that no hold lapses in the run: every answer a 201 with its
    // order.created and pet.updated events.
    {
      name: 'createOrder',
      request: {
        method: 'POST',
        path: '/v1/orders',
        headers: { ...headers, 'Content-Type': 'application/json' },
        rotate: { ...orderPetPool, bodies: ['{"petId":{id},"holdSeconds":86400}'], usedUp: true },
      },
    },
    // completeOrder, a till's sale, no If-Match: each request completes the next of the open
    // orders seeded with their pets pending: every answer a 200, the pet sold, with its
    // order.completed and pet.updated events.
    {
      name: 'completeOrder',
      request: {
        method: 'POST',
        path: '/v1/orders/{id}/complete',
        headers,
        rotate: { firstId: openOrderPool.firstId, count: openOrderPool.count, usedUp: true },
      },
    },
  ];
}

/**
 * --scale's reads of the catalogue (docs/api-design.md, "The catalogue"): one category's page, the
 * same with a status, the category's deep page, and the inventory. Seeded pet i is in category
 * 1 + i % 100 with status i % 4, so category 7 holds every hundredth pet, all `sold`.
 */
function catalogueReads({ rows, headers }) {
  const category = '/v1/pets?limit=20&categoryId=7';
  // 25 pets of the category after it: a full page with a next link, near the end of the table.
  const deepCursor = Buffer.from(`after:${rows - 2500}`).toString('base64url');
  return [
    { name: 'category', request: { method: 'GET', path: category, headers } },
    {
      name: 'categoryStatus',
      request: { method: 'GET', path: `${category}&status=sold`, headers },
    },
    {
      name: 'categoryDeep',
      request: { method: 'GET', path: `${category}&cursor=${deepCursor}`, headers },
    },
    { name: 'inventory', request: { method: 'GET', path: '/v1/inventory', headers } },
  ];
}

/**
 * Builds git revision `rev` for --against in a worktree of its own under the system's temp
 * directory (outside this repository), kept for the next run against the same commit. Its
 * node_modules is a link to this one's when the package-locks are identical, else its own `npm ci`.
 */
function buildRevision(rev, commit) {
  const dir = join(tmpdir(), `animal-store-bench-${commit.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json'))) {
    process.stderr.write(`checking out ${rev} (${commit.slice(0, 12)}) in ${dir}…\n`);
    git('worktree', 'prune');
    git('worktree', 'add', '--detach', '--force', dir, commit);
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    const sameLock =
      git('show', `${commit}:package-lock.json`) ===
      readFileSync('package-lock.json', 'utf8').trim();
    if (sameLock) symlinkSync(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
    else {
      process.stderr.write(`${rev} has another package-lock.json: npm ci there…\n`);
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
    }
  }
  process.stderr.write(`building ${rev} (${commit.slice(0, 12)})…\n`);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'inherit' });
  return { commit, dir, nodeArgs: serverNodeArgs(join(dir, 'package.json')) };
}

function resolveCommit(rev) {
  try {
    return git('rev-parse', '--verify', '--quiet', `${rev}^{commit}`);
  } catch {
    process.stderr.write(`--against: no commit ${JSON.stringify(rev)}\n`);
    process.exit(2);
  }
}

function git(...args) {
  return execFileSync('git', args, { encoding: 'utf8' }).trim();
}

/**
 * Runs this script again, minus --node, on `node` and exits with its status. The whole run moves,
 * not just the servers: the seeding opens better-sqlite3 in this process (lib/data.mjs), the one
 * that Node loads (lib/better-sqlite3.mjs). Children that run `node` by name get it too.
 */
function runUnder(node) {
  if (!existsSync(node)) {
    process.stderr.write(`--node: no such file ${node}\n`);
    process.exit(2);
  }
  const own = new Set(
    tokens
      .filter((token) => token.kind === 'option' && token.name === 'node')
      .flatMap((token) => (token.inlineValue ? [token.index] : [token.index, token.index + 1])),
  );
  const args = process.argv.slice(2).filter((_, index) => !own.has(index));
  process.stderr.write(`running the bench on ${node}…\n`);
  const { status, error } = spawnSync(node, [fileURLToPath(import.meta.url), ...args], {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${dirname(resolve(node))}${delimiter}${process.env.PATH}` },
  });
  if (error) throw error;
  process.exit(status ?? 1);
}

function positiveInteger(flag, value, min, max = Infinity) {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) {
    const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
    process.stderr.write(`${flag} must be an integer ${range} (got ${JSON.stringify(value)})\n`);
    process.exit(2);
  }
  return n;
}
