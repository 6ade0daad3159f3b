// Holds `count` event streams open on `origin` (docs/events.md, "The stream") and keeps reading
// them, as live clients do, until its stdin ends. Prints one JSON line once every stream has
// answered 200 and sent its first line, and one when it has closed them: how many the server
// ended before that, and the bytes read. Spec as JSON in its first argument (stdin is the signal
// to close). Started pinned by event-clients.mjs.
import { once } from 'node:events';

/** Streams requested at once: a burst of a thousand would overflow the server's accept backlog. */
const OPENING_AT_ONCE = 50;

const { origin, key, count } = JSON.parse(process.argv[2]);
const controller = new AbortController();
let closing = false;
let endedEarly = 0;
let bytes = 0;

const streams = [];
while (streams.length < count) {
  const batch = Math.min(OPENING_AT_ONCE, count - streams.length);
  streams.push(...(await Promise.all(Array.from({ length: batch }, openStream))));
}
process.stdout.write(`${JSON.stringify({ opened: streams.length })}\n`);

process.stdin.resume();
await once(process.stdin, 'end');
closing = true;
controller.abort();
await Promise.all(streams.map((stream) => stream.reading));
process.stdout.write(`${JSON.stringify({ endedEarly, bytes })}\n`);

/** Opens one stream, waits for its first line, and keeps reading it in the background. */
async function openStream() {
  const response = await fetch(`${origin}/v1/events/stream`, {
    headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200)
    throw new Error(`GET /v1/events/stream answered ${response.status}: ${await response.text()}`);
  const reader = response.body.getReader();
  const first = await reader.read();
  if (first.done) throw new Error('an event stream ended before its first line');
  bytes += first.value.length;
  return { reading: keepReading(reader) };
}

async function keepReading(reader) {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
    }
    if (!closing) endedEarly++;
  } catch (error) {
    if (!closing) throw error;
  }
}
