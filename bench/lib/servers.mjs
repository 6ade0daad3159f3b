// Starts the service or the reference as a real production process pinned to CPU 0, and measures
// what only the process itself can tell: time from spawn to a 200 on /health/ready, and peak RSS.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuPin } from './cpu.mjs';

const READY_TIMEOUT_MS = 30_000;

/**
 * @param {object} options
 * @param {string} options.name         label for errors
 * @param {string[]} options.nodeArgs  arguments to node: flags, then the script
 * @param {Record<string,string>} options.env
 * @param {number} options.port
 * @param {string} [options.cwd]        where the script's relative paths start (another build's tree)
 * @param {string} options.logFile      stdout and stderr go here (a pipe to us would cost our CPU)
 */
export async function startServer({ name, nodeArgs, env, port, cwd, logFile }) {
  const log = openSync(logFile, 'a');
  const [file, ...args] = cpuPin(0, process.execPath, nodeArgs);
  const startedAt = performance.now();
  const child = spawn(file, args, {
    env: { ...process.env, ...env, PORT: String(port) },
    cwd,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited = false;
  child.on('exit', () => (exited = true));

  const origin = `http://127.0.0.1:${port}`;
  while (!(await isReady(origin))) {
    if (exited) throw new Error(`${name} exited during start; see ${logFile}`);
    if (performance.now() - startedAt > READY_TIMEOUT_MS)
      throw new Error(`${name} not ready after 30 s; see ${logFile}`);
    await sleep(5);
  }
  const coldStartMs = performance.now() - startedAt;

  return {
    origin,
    pid: child.pid,
    coldStartMs,
    /** VmHWM: the kernel's high-water mark of resident memory since the process started. */
    peakRssMb: () =>
      Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024,
    stop: async () => {
      if (exited) throw new Error(`${name} died during the run; see ${logFile}`);
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * `items` in the order of turn `turn` (from 1): as listed in odd turns, reversed in even ones. Rounds
 * start and warm their contenders so, slices take turns so, and `--scale`'s scenarios too: two
 * processes of one build raced in a fixed order read 0.88–0.97 (docs/performance.md, "How a run
 * works"), so none keeps the first place over a run.
 */
export function inTurn(items, turn) {
  return turn % 2 === 1 ? items : [...items].reverse();
}

/** Accepts OTLP/HTTP exports and drops them: the tracing contender needs somewhere to send spans. */
export async function startOtlpSink() {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    close: () => server.close(),
  };
}

/**
 * The unlabelled samples of the service's Prometheus metrics (served on METRICS_PORT), name → value:
 * among them its resident memory, its V8 heap and its open event streams.
 */
export async function readMetrics(metricsPort) {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const samples = (await response.text())
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !line.includes('{'))
    .map((line) => line.split(' '));
  return new Map(samples.map(([name, value]) => [name, Number(value)]));
}

async function isReady(origin) {
  try {
    const response = await fetch(`${origin}/health/ready`);
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}
