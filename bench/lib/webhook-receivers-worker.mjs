// --webhooks' race: receivers for the `webhooks` contender, subscribed to every event. Prints one
// JSON line once subscribed, then one per line read on stdin ("count"): the deliveries each
// receiver got and how many distinct events they were. Spec as JSON in its first argument.
// Started pinned by event-clients.mjs.
import { createInterface } from 'node:readline';
import { startReceivers, subscribe } from './webhook-receivers.mjs';

const { origin, key, count } = JSON.parse(process.argv[2]);
const received = Array.from({ length: count }, () => ({ deliveries: 0, events: new Set() }));
const receivers = await startReceivers(count, (receiver, event) => {
  received[receiver].deliveries++;
  received[receiver].events.add(event.id);
});
const ids = await subscribe(origin, key, receivers.urls);
process.stdout.write(`${JSON.stringify({ ids })}\n`);

for await (const _ of createInterface({ input: process.stdin })) {
  const counts = received.map(({ deliveries, events }) => ({ deliveries, events: events.size }));
  process.stdout.write(`${JSON.stringify(counts)}\n`);
}
await receivers.close();
