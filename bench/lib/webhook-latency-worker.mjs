// Measures how soon a committed change reaches its webhooks (docs/events.md, "Webhooks"): `healthy`
// receivers on loopback subscribed to every event, and with `down` one more webhook whose receiver
// refuses every connection; pets created on `origin` at `createsPerSecond` for `warmupSeconds`,
// unmeasured, then for `seconds`. The warm-up runs on the same receivers and webhooks as the
// measurement, so what is measured is the service at a steady state, not this process's receivers
// compiling their code or the first connections to them. For each measured create and healthy
// receiver, the time its first delivery arrived, counted from when the create was sent and from
// when its answer arrived; every second, the deliveries owed to the healthy receivers (answered
// creates times receivers, minus events arrived). Spec as JSON on stdin; prints the result as
// JSON. Started pinned by event-clients.mjs.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { countOf, createSteadily, round } from './steady-creates.mjs';
import { startReceivers, subscribe } from './webhook-receivers.mjs';

/** How long deliveries still missing after the last answer may take. */
const GRACE_MS = 10_000;
const SAMPLE_MS = 1_000;

const { origin, key, healthy, down, createsPerSecond, warmupSeconds, seconds } = JSON.parse(
  await text(process.stdin),
);

/** Per healthy receiver: when each measured pet's pet.created delivery first arrived, by pet id. */
const arrivals = Array.from({ length: healthy }, () => new Map());
/** The pets of the warm-up, whose deliveries are not counted. */
const warmupPets = new Set();
let deliveries = 0;
const receivers = await startReceivers(healthy, (receiver, event) => {
  if (warmupPets.has(event.data.pet.id)) return;
  deliveries++;
  if (event.type !== 'pet.created') return;
  const first = arrivals[receiver];
  if (!first.has(event.data.pet.id)) first.set(event.data.pet.id, performance.now());
});
const downUrl = down ? [await refusingUrl()] : [];
const ids = await subscribe(origin, key, [...receivers.urls, ...downUrl]);

if (warmupSeconds > 0) {
  const warmup = await createSteadily({
    origin,
    key,
    createsPerSecond,
    seconds: warmupSeconds,
    name: 'Warm-up',
  });
  const warmed = warmup.filter((c) => c.failure === undefined);
  await allArrived(warmed);
  for (const c of warmed) warmupPets.add(c.id);
  for (const first of arrivals) first.clear();
  deliveries = 0;
}

let answered = 0;
const owedSamples = [];
const sampler = setInterval(() => {
  const arrived = arrivals.reduce((sum, first) => sum + first.size, 0);
  owedSamples.push(answered * healthy - arrived);
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
const missing = await allArrived(created);
const downState = down ? await webhook(ids.at(-1)) : undefined;
// None outlives its receiver in a database the next server uses (PostgreSQL).
for (const id of ids) await webhook(id, 'DELETE');
await receivers.close();

const milliseconds = (from) =>
  arrivals.flatMap((first) =>
    created.filter((c) => first.has(c.id)).map((c) => round(first.get(c.id) - c[from])),
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

/** Waits up to GRACE_MS for every healthy receiver to get `created`; resolves to how many did not. */
async function allArrived(created) {
  const missing = () =>
    arrivals.reduce((n, first) => n + created.filter((c) => !first.has(c.id)).length, 0);
  const deadline = performance.now() + GRACE_MS;
  while (missing() > 0 && performance.now() < deadline) await sleep(50);
  return missing();
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
