// The clients of the change feed and the event stream that --events and --streams measure with,
// each in its own process pinned to CPU 1 like the load generator (load.mjs), so no client
// competes with the server for its CPU.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpuPin } from './cpu.mjs';
import { runPinned } from './load.mjs';

const worker = (file) => fileURLToPath(new URL(`./${file}`, import.meta.url));

/**
 * A follower paging the feed from its start, `limit` events a page, until a page is empty or
 * `seconds` (if given) have passed.
 * @param {{origin:string, key:string, limit:number, seconds?:number}} spec
 * @returns {Promise<{events:number, pages:number, seconds:number, eventsPerSecond:number, failure?:string}>}
 */
export async function followFeed(spec) {
  return runToReport('follower-worker.mjs', spec);
}

/**
 * Pets created on one server at a steady rate, their events read from a stream on another (or
 * the same) server.
 * @param {{writeOrigin:string, streamOrigin:string, key:string, createsPerSecond:number, seconds:number}} spec
 * @returns {Promise<{sent:number, createsPerSecond:number, created:number,
 *   failures:Record<string, number>, arrived:number, repeated:number, fromSentMs:number[],
 *   fromAnswerMs:number[]}>} `failures`: creates not answered 201, by status or client error;
 *   per arrived event, the time from its create's request being sent, and from its answer
 *   arriving, to its arrival
 */
export async function measureStreamLatency(spec) {
  return runToReport('stream-latency-worker.mjs', spec);
}

/**
 * Opens `count` event streams on `origin` and keeps reading them until `close()`, which resolves
 * to how many the server ended before it and the bytes they carried.
 * @returns {Promise<{close: () => Promise<{endedEarly:number, bytes:number}>}>}
 */
export async function holdStreams({ origin, key, count }) {
  const holder = startReporting('stream-holder-worker.mjs', { origin, key, count });
  await holder.next();
  return {
    close: async () => {
      holder.child.stdin.end();
      const report = await holder.next();
      await holder.exited;
      return report;
    },
  };
}

/**
 * Pets created on `origin` at a steady rate, their deliveries timed at `healthy` webhook receivers
 * (and with `down`, one more webhook whose receiver refuses connections).
 * @param {{origin:string, key:string, healthy:number, down:boolean, createsPerSecond:number, seconds:number}} spec
 * @returns {Promise<{sent:number, createsPerSecond:number, created:number,
 *   failures:Record<string, number>, owed:number, missing:number, deliveries:number,
 *   fromSentMs:number[], fromAnswerMs:number[], owedSamples:number[],
 *   down?:{pendingDeliveries:number, reason:string|null}}>}
 */
export async function measureWebhookLatency(spec) {
  return runToReport('webhook-latency-worker.mjs', spec);
}

/**
 * `count` webhook receivers in a process of their own, subscribed to every event on `origin` as
 * webhooks `ids`, until `close()`; `counts()` resolves to the deliveries each got so far and how
 * many distinct events they were; with `timed`, `arrivals()` to each one's pet.created events as
 * [pet id, first arrival (performance.timeOrigin + performance.now()), deliveries].
 * @returns {Promise<{ids: number[], counts: () => Promise<{deliveries:number, events:number}[]>,
 *   arrivals: () => Promise<[number, number, number][][]>, close: () => Promise<void>}>}
 */
export async function holdWebhookReceivers({ origin, key, count, timed = false }) {
  const receivers = startReporting('webhook-receivers-worker.mjs', { origin, key, count, timed });
  const { ids } = await receivers.next();
  return {
    ids,
    counts: () => {
      receivers.child.stdin.write('count\n');
      return receivers.next();
    },
    arrivals: () => {
      receivers.child.stdin.write('arrivals\n');
      return receivers.next();
    },
    close: async () => {
      receivers.child.stdin.end();
      await receivers.exited;
    },
  };
}

/** Runs worker `file` pinned to CPU 1 with `spec` as JSON on stdin; resolves to its JSON report. */
async function runToReport(file, spec) {
  return JSON.parse(await runPinned(process.execPath, [worker(file)], JSON.stringify(spec)));
}

/**
 * Starts worker `file` pinned to CPU 1 with `spec` as JSON in its first argument; it prints one
 * JSON line per report, which `next()` reads.
 */
function startReporting(file, spec) {
  const [command, ...args] = cpuPin(1, process.execPath, [worker(file), JSON.stringify(spec)]);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    exited,
    next: async () => {
      const { value, done } = await lines.next();
      if (done) throw new Error(`${file} exited ${(await exited)[0]}`);
      return JSON.parse(value);
    },
  };
}
