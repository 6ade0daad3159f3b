// Follows the change feed from its start as a follower does (docs/events.md, "The feed"): requests
// a page, parses it, requests its `Link: rel="next"`, until a page comes back empty or `seconds`
// have passed. Spec as JSON on stdin; prints what it read as JSON. Started pinned by event-clients.mjs.
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';

const { origin, key, limit, seconds } = JSON.parse(await text(process.stdin));
const headers = { Authorization: `Bearer ${key}` };
const deadline = seconds === undefined ? Infinity : performance.now() + seconds * 1000;

let path = `/v1/events?limit=${limit}`;
let events = 0;
let pages = 0;
let failure;
const startedAt = performance.now();
while (performance.now() < deadline) {
  const response = await fetch(`${origin}${path}`, { headers });
  if (response.status !== 200) {
    failure = `GET ${path} answered ${response.status}: ${await response.text()}`;
    break;
  }
  const page = await response.json();
  pages++;
  if (page.length === 0) break;
  events += page.length;
  path = nextLink(response.headers.get('link'));
}
const elapsed = (performance.now() - startedAt) / 1000;

process.stdout.write(
  JSON.stringify({ events, pages, seconds: elapsed, eventsPerSecond: events / elapsed, failure }),
);

function nextLink(link) {
  const next = /<([^>]+)>;\s*rel="next"/.exec(link ?? '');
  if (!next) throw new Error(`no rel="next" link in ${JSON.stringify(link)}`);
  return next[1];
}
