// --webhooks' receivers, subscribed to every event, in a process of their own, as a receiver is:
// for the race's `webhooks` contender and for the delivery timing (webhook-latency-worker.mjs),
// whose creates would otherwise hold up their answers. Prints one JSON line once subscribed, then
// one per line read on stdin: for "count", the deliveries each receiver got and how many distinct
// events they were; with `timed` in the spec, for "arrivals", per receiver, [pet id, first
// arrival, deliveries] of each pet.created event, its first arrival on the clock every process on
// the machine shares (performance.timeOrigin + performance.now(), in ms); the race leaves it out,
// so its receivers do no more than count. Spec as JSON in its first argument.
// Started pinned by event-clients.mjs.
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { startReceivers, subscribe } from './webhook-receivers.mjs';

const { origin, key, count, timed = false } = JSON.parse(process.argv[2]);
const received = Array.from({ length: count }, () => ({
  deliveries: 0,
  events: new Set(),
  created: new Map(),
}));
const receivers = await startReceivers(count, (receiver, event) => {
  const got = received[receiver];
  got.deliveries++;
  got.events.add(event.id);
  if (!timed || event.type !== 'pet.created') return;
  const { created } = got;
  const earlier = created.get(event.data.pet.id);
  if (earlier) earlier[2]++;
  else
    created.set(event.data.pet.id, [
      event.data.pet.id,
      performance.timeOrigin + performance.now(),
      1,
    ]);
});
const ids = await subscribe(origin, key, receivers.urls);
process.stdout.write(`${JSON.stringify({ ids })}\n`);

for await (const command of createInterface({ input: process.stdin })) {
  const report =
    command === 'arrivals'
      ? received.map(({ created }) => [...created.values()])
      : received.map(({ deliveries, events }) => ({ deliveries, events: events.size }));
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
await receivers.close();
