// Measures how soon a committed change reaches its webhooks (docs/events.md, "Webhooks"): `healthy`
// receivers on loopback subscribed to every event, and with `down` one more webhook whose receiver
// refuses every connection; pets created on `origin` at `createsPerSecond` for `warmupSeconds`,
// unmeasured, then for `seconds`. The warm-up runs on the same receivers and webhooks as the
// measurement, so what is measured is the service at a steady state, not the receivers compiling
// their code or the first connections to them. The receivers answer in a process of their own
// (webhook-receivers-worker.mjs): on the same CPU as this one, but not behind its creates on one
// event loop. For each measured create and healthy receiver, the time its first delivery arrived,
// counted from when the create was sent and from when its answer arrived; every second, the
// deliveries owed to the healthy receivers (answered creates times receivers, minus events
// arrived). Spec as JSON on stdin; prints the result as JSON. Started pinned by event-clients.mjs.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { holdWebhookReceivers } from './event-clients.mjs';
import { countOf, createSteadily, round } from './steady-creates.mjs';
import { subscribe } from './webhook-receivers.mjs';

/** How long deliveries still missing after the last answer may take. */
const GRACE_MS = 10_000;
const SAMPLE_MS = 1_000;

const { origin, key, healthy, down, createsPerSecond, warmupSeconds, seconds } = JSON.parse(
  await text(process.stdin),
);

const receivers = await holdWebhookReceivers({ origin, key, count: healthy, timed: true });
const ids = [
  ...receivers.ids,
  ...(down ? await subscribe(origin, key, [await refusingUrl()]) : []),
];
/** Distinct events the receivers had got, together, when the measured creates began. */
let eventsBefore = 0;

if (warmupSeconds > 0) {
  const warmup = await createSteadily({
    origin,
    key,
    createsPerSecond,
    seconds: warmupSeconds,
    name: 'Warm-up',
  });
  await allArrived(warmup.filter((c) => c.failure === undefined).length);
  eventsBefore = await eventsArrived();
}

let answered = 0;
const owedSamples = [];
let sampling = false;
// A sample reads the receivers first and the answers after, so a delivery that lands meanwhile can
// only make it too high; a tick that comes while one is still reading is skipped.
const sampler = setInterval(async () => {
  if (sampling) return;
  sampling = true;
  const arrived = (await eventsArrived()) - eventsBefore;
  owedSamples.push(answered * healthy - arrived);
  sampling = false;
}, SAMPLE_MS);
const creates = await createSteadily({
  origin,
  key,
  createsPerSecond,
  seconds,
  name: 'Webhook',
  onAnswer: (c) => c.failure === undefined && answered++,
});
clearInterval(sampler);
const created = creates.filter((c) => c.failure === undefined);
await allArrived(created.length);
const downState = down ? await webhook(ids.at(-1)) : undefined;
// None outlives its receiver in a database the next server uses (PostgreSQL).
for (const id of ids) await webhook(id, 'DELETE');
const arrivals = (await receivers.arrivals()).map(
  (pets) => new Map(pets.map(([id, arrivedAt, deliveries]) => [id, { arrivedAt, deliveries }])),
);
await receivers.close();

const milliseconds = (from) =>
  arrivals.flatMap((first) =>
    created
      .filter((c) => first.has(c.id))
      .map((c) => round(first.get(c.id).arrivedAt - (performance.timeOrigin + c[from]))),
  );
// Counted by pet, so an event the counts above saw that is not a measured create's (a warm-up
// delivery arriving late, a create that failed here but committed there) hides no missing one.
const missing = arrivals.reduce(
  (sum, first) => sum + created.filter((c) => !first.has(c.id)).length,
  0,
);
const deliveries = arrivals.reduce(
  (sum, first) => sum + created.reduce((n, c) => n + (first.get(c.id)?.deliveries ?? 0), 0),
  0,
);
const sendingSeconds = (creates.at(-1).sentAt - creates[0].sentAt) / 1000;
process.stdout.write(
  JSON.stringify({
    sent: creates.length,
    createsPerSecond: (creates.length - 1) / sendingSeconds,
    created: created.length,
    failures: countOf(creates.flatMap((c) => c.failure ?? [])),
    owed: created.length * healthy,
    missing,
    deliveries,
    fromSentMs: milliseconds('sentAt'),
    fromAnswerMs: milliseconds('answeredAt'),
    owedSamples,
    ...(downState && {
      down: { pendingDeliveries: downState.pendingDeliveries, reason: downState.lastFailureReason },
    }),
  }),
);

/** Distinct events the healthy receivers have got, together. */
async function eventsArrived() {
  return (await receivers.counts()).reduce((sum, { events }) => sum + events, 0);
}

/**
 * Waits up to GRACE_MS until the healthy receivers have got, together, as many events since
 * `eventsBefore` as `answered` creates owe them.
 */
async function allArrived(answered) {
  const missing = async () => answered * healthy - ((await eventsArrived()) - eventsBefore);
  const deadline = performance.now() + GRACE_MS;
  while ((await missing()) > 0 && performance.now() < deadline) await sleep(50);
}

/** A loopback URL nothing listens on: connections to it are refused. */
async function refusingUrl() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}

async function webhook(id, method = 'GET') {
  const response = await fetch(`${origin}/v1/webhooks/${id}`, {
    method,
    headers: { Authorization: `Bearer ${key}` },
  });
  return method === 'GET' ? response.json() : undefined;
}
