// Measures how soon a committed change reaches an event stream (docs/events.md, "The stream"): one
// stream open on `streamOrigin`, pets created on `writeOrigin` at `createsPerSecond` for `seconds`,
// each create sent on schedule whether or not the ones before it were answered. For each create, the
// time its event arrived on the stream, counted from when its request was sent and from when its
// answer arrived. Spec as JSON on stdin; prints the result as JSON. Started pinned by event-clients.mjs.
import { performance } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { countOf, createSteadily, round } from './steady-creates.mjs';

/**
 * A stream opened without Last-Event-ID starts at the newest event its first query finds: the
 * creates wait this long, so none commits before that query and is skipped.
 */
const STREAM_START_MS = 1_000;
/** How long events still missing after the last answer may take: well past the promised second. */
const GRACE_MS = 5_000;

const { writeOrigin, streamOrigin, key, createsPerSecond, seconds } = JSON.parse(
  await text(process.stdin),
);
const auth = { Authorization: `Bearer ${key}` };

/** When each pet's pet.created event arrived on the stream, by pet id. */
const arrivals = new Map();
let repeated = 0;
const stream = await openStream((event) => {
  if (event.type !== 'pet.created') return;
  if (arrivals.has(event.data.pet.id)) repeated++;
  else arrivals.set(event.data.pet.id, performance.now());
});
await sleep(STREAM_START_MS);
const creates = await createSteadily({
  origin: writeOrigin,
  key,
  createsPerSecond,
  seconds,
  name: 'Stream',
});
const created = creates.filter((c) => c.failure === undefined);
const deadline = performance.now() + GRACE_MS;
while (created.some((c) => !arrivals.has(c.id)) && performance.now() < deadline) await sleep(50);
await stream.close();

const arrived = created.filter((c) => arrivals.has(c.id));
const milliseconds = (from) => arrived.map((c) => round(arrivals.get(c.id) - c[from]));
const sendingSeconds = (creates.at(-1).sentAt - creates[0].sentAt) / 1000;
process.stdout.write(
  JSON.stringify({
    sent: creates.length,
    createsPerSecond: (creates.length - 1) / sendingSeconds,
    created: created.length,
    failures: countOf(creates.flatMap((c) => c.failure ?? [])),
    arrived: arrived.length,
    repeated,
    fromSentMs: milliseconds('sentAt'),
    fromAnswerMs: milliseconds('answeredAt'),
  }),
);

/** Opens the stream and calls `onEvent` with each event's data as it arrives. */
async function openStream(onEvent) {
  const controller = new AbortController();
  const response = await fetch(`${streamOrigin}/v1/events/stream`, {
    headers: { ...auth, Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200)
    throw new Error(`GET /v1/events/stream answered ${response.status}: ${await response.text()}`);
  const reading = readEvents(response.body, onEvent).catch((error) => {
    if (!controller.signal.aborted) throw error;
  });
  return {
    close: () => {
      controller.abort();
      return reading;
    },
  };
}

/** Parses text/event-stream: blank-line-separated events, `data:` lines, comments ignored. */
async function readEvents(body, onEvent) {
  let unparsed = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    const events = (unparsed + chunk).split('\n\n');
    unparsed = events.pop();
    for (const event of events) {
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length));
      if (data.length > 0) onEvent(JSON.parse(data.join('\n')));
    }
  }
}
