// Follows the change feed from its start as a follower does (docs/events.md, "The feed"): requests
// a page, parses it, requests its `Link: rel="next"`, until a page comes back empty or `seconds`
// have passed. Spec as JSON on stdin; prints what it read as JSON. Started pinned by event-clients.mjs.
//
// One request at a time, so the follower's own cost per page counts against its events/s: it uses
// node:http on one kept-alive connection, which took 1.5× as many pages a second as fetch() here.
import { Agent, get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';

const { origin, key, limit, seconds } = JSON.parse(await text(process.stdin));
const headers = { Authorization: `Bearer ${key}` };
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const deadline = seconds === undefined ? Infinity : performance.now() + seconds * 1000;

let path = `/v1/events?limit=${limit}`;
let events = 0;
let pages = 0;
let failure;
const startedAt = performance.now();
while (performance.now() < deadline) {
  const response = await request(path);
  if (response.status !== 200) {
    failure = `GET ${path} answered ${response.status}: ${response.body}`;
    break;
  }
  const page = JSON.parse(response.body);
  pages++;
  if (page.length === 0) break;
  events += page.length;
  path = nextLink(response.link);
}
const elapsed = (performance.now() - startedAt) / 1000;
agent.destroy();

process.stdout.write(
  JSON.stringify({ events, pages, seconds: elapsed, eventsPerSecond: events / elapsed, failure }),
);

function request(path) {
  return new Promise((resolve, reject) => {
    get(`${origin}${path}`, { headers, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode, link: response.headers.link, body }),
      );
      response.on('error', reject);
    }).on('error', reject);
  });
}

function nextLink(link) {
  const next = /<([^>]+)>;\s*rel="next"/.exec(link ?? '');
  if (!next) throw new Error(`no rel="next" link in ${JSON.stringify(link)}`);
  return next[1];
}
