// Runs one autocannon load (spec as JSON on stdin) and prints the summary as JSON; started pinned by load.mjs.
import autocannon from 'autocannon';
import { text } from 'node:stream/consumers';

const spec = JSON.parse(await text(process.stdin));
const [before, after] = spec.path.split('{id}');
const randomPath = () => `${before}${1 + Math.floor(Math.random() * spec.maxId)}${after}`;
const { rotate } = spec;
let sent = 0;

/** The next request: as load.mjs's runLoad documents `path` and `rotate`. */
function nextRequest(request) {
  const k = (rotate?.start ?? 0) + sent++;
  if (rotate !== undefined) {
    const id = String(rotate.firstId + (k % rotate.count));
    const { bodies } = rotate;
    const body = bodies?.[Math.floor(k / rotate.count) % bodies.length].replaceAll('{id}', id);
    return { ...request, path: spec.path.replaceAll('{id}', id), body };
  }
  return { ...request, path: after === undefined ? spec.path : randomPath() };
}

const result = await autocannon({
  url: spec.origin,
  connections: spec.connections,
  duration: spec.seconds,
  timeout: 10,
  requests: [
    {
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      setupRequest: nextRequest,
    },
  ],
});

const requests = result.requests.total;

/** Answers of another status than the scenario expects: any non-2xx, or anything but its status. */
function unexpectedStatuses() {
  if (spec.expectStatus === undefined) return result.non2xx;
  return requests - (result.statusCodeStats[String(spec.expectStatus)]?.count ?? 0);
}

process.stdout.write(
  JSON.stringify({
    requests,
    sent,
    rps: requests / (result.duration || spec.seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + unexpectedStatuses(),
  }),
);
