// --sweep: the orders' expiry sweep (src/orders/order-expiry-sweep.ts) expiring N lapsed holds
// under createPet load, on `sweeping`, raced against `service`, whose database has none. Both are
// warmed first, the holds not yet lapsed; then they lapse, and slices run in turns until the sweep
// is done. `sweeping` is stopped (SIGSTOP) outside its own slices: both servers share CPU 0, and a
// sweep running through `service`'s slices would slow those too. The sweep's time is the time
// `sweeping` ran from the lapse until no hold was open.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Database } from './better-sqlite3.mjs';
import { copyPostgres } from './data.mjs';
import { checker, formatTable, median, pairedRatios, summarize, targetLines } from './report.mjs';

/** Expiries a second the sweep must reach, and createPet's share of its rate without the sweep. */
const SWEEP_PER_SECOND = 2_000;
const CREATE_RATIO = 0.85;
/** How often, while `sweeping` runs, its database is asked whether a hold is still open. */
const POLL_MS = 100;
/** The holds' deadline, set this far ahead: time to write it (and VACUUM on PostgreSQL) first. */
const LAPSE_LEAD_MS = 5_000;
/** A sweep slower than a tenth of its line for this long is given up: it is not going to finish. */
const GIVE_UP_MS = (lapsed) => 30_000 + (10 * 1000 * lapsed) / SWEEP_PER_SECOND;

/**
 * One round on fresh servers: `sweeping` on a database of its own (a fresh copy of the SQLite
 * seed, or the PostgreSQL database copied to `<name>_sweeping`) holding `lapsed` more pets, each
 * held by an open order. Returns both contenders' runs, `sweeping`'s with its `sweep`.
 */
export async function runSweepRound(
  round,
  { rounds, lapsed, warmup, slice, scenario, pg: pgUrl, freshCopy, startContender, load },
) {
  process.stderr.write(`round ${round}/${rounds}: `);
  const database = pgUrl ? await copyPostgres(pgUrl, '_sweeping') : freshCopy();
  const holds = pgUrl ? await postgresHolds(database) : sqliteHolds(database);
  const servers = [];
  let sweeping;
  try {
    await holds.seed(lapsed);
    servers.push(await startContender('service', round));
    servers.push(await startContender('sweeping', round, database));
    const [service, sweepingServer] = servers;
    process.stderr.write(
      servers.map((s) => `${s.contender} ready in ${Math.round(s.coldStartMs)} ms`).join(', '),
    );
    for (const server of servers) if (warmup > 0) await load(server, scenario, warmup);

    const lapseAt = Date.now() + LAPSE_LEAD_MS;
    await holds.lapse(new Date(lapseAt).toISOString());
    if (Date.now() >= lapseAt)
      throw new Error(`writing ${lapsed} holds' deadline took over ${LAPSE_LEAD_MS} ms`);
    sweeping = stopped(sweepingServer.pid);
    await sleep(lapseAt - Date.now());

    // Pairs of slices in turns (A B, B A, …) until the sweep is done; a pair counts only if the
    // sweep was still running when `sweeping`'s slice ended.
    const slices = { service: [], sweeping: [] };
    let sweptMs;
    for (let i = 0; ; i++) {
      const pair = {};
      for (const server of i % 2 === 0 ? servers : [...servers].reverse()) {
        if (server === service) {
          pair.service = await load(service, scenario, slice);
          continue;
        }
        sweeping.resume();
        const watch = watchSweep(holds, sweeping);
        pair.sweeping = await load(sweepingServer, scenario, slice);
        sweeping.stop();
        sweptMs = await watch.end();
        if (sweptMs !== undefined) break;
      }
      if (sweptMs !== undefined) break;
      for (const name of Object.keys(slices)) slices[name].push(pair[name]);
      if (sweeping.ranMs() > GIVE_UP_MS(lapsed))
        throw new Error(`the sweep ran ${Math.round(sweeping.ranMs() / 1000)} s unfinished`);
    }
    const seconds = sweptMs / 1000;
    process.stderr.write(
      `\n  ${lapsed.toLocaleString('en')} holds expired in ${seconds.toFixed(1)} s: ` +
        `${Math.round(lapsed / seconds)}/s; ${slices.sweeping.length} slice pairs within it`,
    );
    if (slices.sweeping.length === 0)
      throw new Error('no slice fell within the sweep: raise --lapsed, or lower --slice');
    const outcome = await holds.outcome();
    const { expired, notExpired, available, events } = outcome;
    if (expired !== lapsed || notExpired !== 0 || available !== lapsed || events !== lapsed)
      throw new Error(
        `of ${lapsed} lapsed holds ${expired} orders expired (${notExpired} not), ` +
          `${available} pets available, ${events} order.expired events`,
      );
    const result = servers.map((server) => ({
      contender: server.contender,
      round,
      coldStartMs: server.coldStartMs,
      peakRssMb: server.peakRssMb(),
      scenarios: { [scenario.name]: slices[server.contender] },
      ...(server === sweepingServer && {
        sweep: { lapsed, seconds, perSecond: lapsed / seconds, ...outcome },
      }),
    }));
    process.stderr.write(
      `\n  peak RSS ${result.map((r) => `${r.contender} ${Math.round(r.peakRssMb)} MB`).join(', ')}\n`,
    );
    return result;
  } finally {
    if (sweeping?.isStopped()) sweeping.resume();
    await holds.close();
    await stopAll(servers);
  }
}

/** Stops every server, the others too when one died during the run; then fails if one did. */
async function stopAll(servers) {
  const stops = await Promise.allSettled(servers.map((server) => server.stop()));
  const failed = stops.find(({ status }) => status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Stops the process `pid` now; `resume()` and `stop()` continue and stop it again, and `ranMs()`
 * adds up the time it ran since.
 */
function stopped(pid) {
  process.kill(pid, 'SIGSTOP');
  let ranMs = 0;
  let resumedAt;
  return {
    resume() {
      resumedAt = performance.now();
      process.kill(pid, 'SIGCONT');
    },
    stop() {
      process.kill(pid, 'SIGSTOP');
      ranMs += performance.now() - resumedAt;
      resumedAt = undefined;
    },
    isStopped: () => resumedAt === undefined,
    ranMs: () => ranMs + (resumedAt === undefined ? 0 : performance.now() - resumedAt),
  };
}

/**
 * Asks every POLL_MS whether a hold is still open, while `sweeping` runs. `end()`, once it is
 * stopped again, resolves to its running time at the first answer that found none (at most
 * POLL_MS late), or undefined while one is open.
 */
function watchSweep(holds, sweeping) {
  let sweptMs;
  let ending = false;
  const polling = (async () => {
    while (!ending) {
      if (!(await holds.anyOpen())) {
        sweptMs = sweeping.ranMs();
        return;
      }
      await sleep(POLL_MS);
    }
  })();
  return {
    async end() {
      ending = true;
      await polling;
      if (sweptMs === undefined && !(await holds.anyOpen())) sweptMs = sweeping.ranMs();
      return sweptMs;
    },
  };
}

/** Only integers and ISO times go into the SQL, so one text serves both engines' parameters. */
const SQL = {
  lastPet: 'SELECT COALESCE(MAX(id), 0) AS id FROM pets',
  // As OrdersRepository.place leaves them: the pet pending at revision 2 (its hold bumped it), the
  // order open; the deadline an hour ahead until lapse(). No order.created events: nothing the
  // sweep does reads them.
  heldPets: (numbers) =>
    `WITH ${numbers} INSERT INTO pets (name, category_id, status, revision)
    SELECT 'held ' || i, 1 + i % 100, 'pending', 2 FROM n`,
  orders: (afterId, now) =>
    `INSERT INTO orders (pet_id, status, created_at, expires_at)
    SELECT id, 'open', '${now.toISOString()}', '${new Date(now.getTime() + 3_600_000).toISOString()}'
    FROM pets WHERE id > ${afterId} ORDER BY id`,
  lapse: (at) => `UPDATE orders SET expires_at = '${at}' WHERE status = 'open'`,
  anyOpen: "SELECT 1 AS open FROM orders WHERE status = 'open' LIMIT 1",
  // The seeded orders are the only ones: createPet makes none.
  outcome: `SELECT
    (SELECT COUNT(*) FROM orders WHERE status = 'expired') AS expired,
    (SELECT COUNT(*) FROM orders WHERE status <> 'expired') AS not_expired,
    (SELECT COUNT(*) FROM pets p JOIN orders o ON o.pet_id = p.id
      WHERE p.status = 'available') AS available,
    (SELECT COUNT(*) FROM pet_events WHERE type = 'order.expired') AS events`,
};

const toOutcome = (row) => ({
  expired: Number(row.expired),
  notExpired: Number(row.not_expired),
  available: Number(row.available),
  events: Number(row.events),
});

/** The holds in the SQLite file at `path`: seeded before its server starts, then read beside it. */
function sqliteHolds(path) {
  const db = new Database(path, { fileMustExist: true });
  return {
    async seed(count) {
      const afterId = db.prepare(SQL.lastPet).get().id;
      db.transaction(() => {
        db.exec(
          SQL.heldPets(
            `RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`,
          ),
        );
        db.exec(SQL.orders(afterId, new Date()));
      })();
    },
    async lapse(at) {
      db.exec(SQL.lapse(at));
    },
    anyOpen: async () => db.prepare(SQL.anyOpen).get() !== undefined,
    outcome: async () => toOutcome(db.prepare(SQL.outcome).get()),
    close: async () => db.close(),
  };
}

/** The holds in the PostgreSQL database at `url`, analyzed after each bulk write as data.mjs does. */
async function postgresHolds(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const one = async (sql) => (await client.query(sql)).rows[0];
  return {
    async seed(count) {
      const afterId = Number((await one(SQL.lastPet)).id);
      await client.query('BEGIN');
      await client.query(SQL.heldPets(`n(i) AS (SELECT generate_series(1, ${count}))`));
      await client.query(SQL.orders(afterId, new Date()));
      await client.query('COMMIT');
      await client.query('VACUUM ANALYZE pets, orders');
    },
    // The deadline's UPDATE leaves a dead version of every order behind: gone before the sweep.
    async lapse(at) {
      await client.query(SQL.lapse(at));
      await client.query('VACUUM ANALYZE orders');
    },
    anyOpen: async () => (await client.query(SQL.anyOpen)).rows.length > 0,
    outcome: async () => toOutcome(await one(SQL.outcome)),
    close: () => client.end(),
  };
}

/**
 * The common summary (every contender's createPet, peak RSS, cold start, errors) with the sweep's
 * figures: its expiries per second, the median over rounds, and createPet on `sweeping` over
 * `service`, the median of every slice pair's ratio.
 */
export function summarizeSweep(runs, { pg, connections }) {
  const common = summarize(runs, ['create'], { pg, scale: false, connections });
  const of = (name) => runs.filter((run) => run.contender === name);
  const [sweeping, service] = [of('sweeping'), of('service')];
  const create = pairedRatios(sweeping, service, ['create']).create;
  const rounds = sweeping.map((run, i) => ({
    ...run.sweep,
    pairs: run.scenarios.create.length,
    createRatio: pairedRatios([run], [service[i]], ['create']).create.rps,
  }));
  const perSecond = median(rounds.map((r) => r.perSecond));
  const targets = [];
  const check = checker(targets);
  check(
    `sweep of ${sweeping[0].sweep.lapsed.toLocaleString('en')} lapsed holds, expiries/s`,
    perSecond,
    '≥',
    SWEEP_PER_SECOND,
  );
  check('create req/s, sweeping / service', create.rps, '≥', CREATE_RATIO);
  return {
    ...common,
    sweep: { perSecond, create, rounds },
    targets: [...targets, ...common.targets],
  };
}

export function printSweepReport({ setup, machine, summary }) {
  const { contenders, sweep } = summary;
  const count = (n) => Math.round(n).toLocaleString('en');
  const perRound = (value) => sweep.rounds.map(value).join('; ');
  const create = (name) => contenders[name].scenarios.create;
  const latency = (name) => `${create(name).p50Ms.toFixed(2)} / ${create(name).p99Ms.toFixed(2)}`;
  const table = [
    ['measurement', 'all rounds', 'per round'],
    ['sweep: expiries/s (median)', count(sweep.perSecond), perRound((r) => count(r.perSecond))],
    ['sweep: seconds `sweeping` ran', '', perRound((r) => r.seconds.toFixed(1))],
    [
      'create req/s, sweeping / service (median of slice pairs)',
      sweep.create.rps.toFixed(2),
      perRound((r) => r.createRatio.toFixed(2)),
    ],
    ['create p99, sweeping / service', sweep.create.p99.toFixed(2), ''],
    ['slice pairs within the sweep', sweep.create.pairs, perRound((r) => r.pairs)],
    ...['service', 'sweeping'].map((name) => [
      `create on ${name}: req/s, p50 / p99 ms`,
      `${count(create(name).rps)}, ${latency(name)}`,
      '',
    ]),
    [
      'cold start ms, peak RSS MB: service; sweeping',
      ['service', 'sweeping']
        .map((n) => `${count(contenders[n].coldStartMs)}, ${count(contenders[n].peakRssMb)}`)
        .join('; '),
      '',
    ],
  ];
  const out = [
    '',
    `${machine.cpuModel} ×${machine.cpus}, Node ${machine.node}; ${setup.engine}, ` +
      `${setup.rows.toLocaleString('en')} pets, ${setup.lapsed.toLocaleString('en')} lapsed holds ` +
      `on \`sweeping\`; ${setup.rounds} rounds, each after ${setup.warmup} s warm-up: ${setup.slice} s ` +
      `slices in turns until the sweep is done, \`sweeping\` stopped outside its own; ` +
      `${setup.connections} connections via ${setup.loadGenerator}; ${setup.pinning}`,
    '',
    ...formatTable(table),
    ...targetLines(summary.targets),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}
