// Drives HTTP load from its own process pinned to CPU 1, so the load generator never competes with
// the server (pinned to CPU 0). wrk (C, cheap per request) when installed, else autocannon from npm.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPin } from './cpu.mjs';

const AUTOCANNON_WORKER = fileURLToPath(new URL('./autocannon-worker.mjs', import.meta.url));

export const loadGenerator = hasWrk() ? 'wrk' : 'autocannon';

/**
 * @param {object} spec
 * @param {string} spec.origin       e.g. http://127.0.0.1:4100
 * @param {'GET'|'POST'|'PATCH'|'PUT'|'DELETE'} spec.method
 * @param {string} spec.path         fixed path, or with `{id}` replaced per request by a random id
 *   in 1..maxId, or by the ids of `rotate`
 * @param {number} [spec.maxId]
 * @param {{firstId:number, count:number, bodies?:string[], start:number, usedUp?:boolean}} [spec.rotate]
 *   request k (from `start` on) is about id firstId + k % count, which replaces `{id}` in the path
 *   and in its body, bodies[⌊k / count⌋ % bodies.length], or no body: with two bodies each pass
 *   over the pool sends every row the other, so a run that goes on from where the last one
 *   stopped (start = the `sent` so far) changes its row with every request; `usedUp`: each
 *   request uses its row up (deletePet, createOrder, completeOrder), so the pool must be larger
 *   than all a run sends (bench/run.mjs checks)
 * @param {Record<string,string>} spec.headers
 * @param {string} [spec.body]
 * @param {number} [spec.expectStatus] the one status counted as success (default: any 2xx)
 * @param {number} spec.connections
 * @param {number} spec.seconds
 * @returns {Promise<{requests:number, sent:number, rps:number, p50Ms:number, p99Ms:number, errors:number}>}
 *   `sent`: requests written to the server, those still unanswered at the end included
 */
export function runLoad(spec) {
  return loadGenerator === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

function hasWrk() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
    return error.code !== 'ENOENT';
  }
}

async function runWrk(spec) {
  // wrk loads the script once per Lua state (main + each thread), so it has to be a real file.
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(spec));
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    spec.origin,
  ];
  const output = await runPinned('wrk', args, '').finally(() =>
    rmSync(dir, { recursive: true, force: true }),
  );
  const line = output.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`wrk printed no summary:\n${output}`);
  return JSON.parse(line.slice('BENCH_JSON '.length));
}

function wrkScript({ method, path, maxId, rotate, headers, body }) {
  const lua = JSON.stringify; // JSON string literals are valid Lua string literals for our ASCII inputs
  const headerLines = Object.entries(headers).map(
    ([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`,
  );
  const [before, after] = path.split('{id}');
  // `sent` is global in each thread's Lua state, so done() can add them up (thread:get). It starts
  // at -1: wrk calls request() once before the run to check the script, in the state of its first
  // (here only) thread, and sends nothing of that call, so it must not take a place in `rotate`.
  const request =
    rotate !== undefined
      ? `local bodies = ${rotate.bodies === undefined ? 'nil' : `{ ${rotate.bodies.map(lua).join(', ')} }`}
request = function()
  local k = ${rotate.start} + math.max(sent, 0)
  sent = sent + 1
  local id = string.format('%d', ${rotate.firstId} + k % ${rotate.count})
  local body = bodies and (bodies[math.floor(k / ${rotate.count}) % #bodies + 1]:gsub('{id}', id))
  return wrk.format(nil, (${lua(path)}):gsub('{id}', id), nil, body)
end`
      : after === undefined
        ? // Formatted in init, once wrk has added the Host header (HTTP/1.1 requests without one get a 400).
          `local req\ninit = function() req = wrk.format(nil, ${lua(path)}) end\nrequest = function() sent = sent + 1; return req end`
        : `request = function() sent = sent + 1; return wrk.format(nil, ${lua(before)} .. math.random(1, ${maxId}) .. ${lua(after)}) end`;
  return `
wrk.method = ${lua(method)}
${body === undefined ? '' : `wrk.body = ${lua(body)}`}
${headerLines.join('\n')}
sent = -1
${request}
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get('sent') end
  local e = summary.errors
  local seconds = summary.duration / 1e6
  -- Every 0.1 % quantile, so the bench can merge slices into one latency distribution.
  local quantiles = {}
  for i = 1, 1000 do quantiles[i] = string.format('%.3f', latency:percentile(i / 10) / 1000) end
  io.write(string.format('BENCH_JSON {"requests":%d,"sent":%d,"rps":%.1f,"p50Ms":%.3f,"p99Ms":%.3f,"errors":%d,"quantilesMs":[%s]}\\n',
    summary.requests, total, summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout, table.concat(quantiles, ',')))
end
`;
}

async function runAutocannon(spec) {
  const output = await runPinned(process.execPath, [AUTOCANNON_WORKER], JSON.stringify(spec));
  return JSON.parse(output);
}

/** Runs `command` on CPU 1 with `stdin` as its input, and resolves to its stdout once it exits 0. */
export function runPinned(command, args, stdin) {
  const [file, ...pinnedArgs] = cpuPin(1, command, args);
  return new Promise((resolve, reject) => {
    const child = spawn(file, pinnedArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} exited ${code}:\n${output}`)),
    );
    child.stdin.end(stdin);
  });
}
