import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { openEventStream } from '../../support/event-stream-client.js';
import { freePort } from '../../support/free-port.js';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import {
  assertProperty,
  countRequest,
  expectRequestsSent,
  HOSTILE_ENV,
  requestFloor,
} from '../../support/hostile-run.js';
import { OpenApiDocument } from '../../support/openapi-arbitraries.js';
import {
  forgedEventId,
  issuesTx,
  MAX_BIGINT,
  refusedEventId as refused,
} from '../../support/hostile-event-ids.js';
import { ENGINES, type Engine } from '../../support/test-database.js';
import {
  RESET_STAGES,
  resetStreamRequest,
  startHeldApp,
  type HeldApp,
} from '../events/held-stream-app.js';

/**
 * Hostile input to the change feed and the stream: any `after`, `limit` and `Last-Event-ID` gets a
 * 200 or a 400 naming the field, never a 5xx; an id whose parts this engine never issues is a 400,
 * and the process goes on answering. An id this service made, of an event it keeps, is served from
 * right after it. A client that resets its connection at any point of a stream's opening leaves
 * no stream counted. Seed and run scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const listEvents = doc.operation('listEvents');
const EVENT_ID = /^(0|[1-9]\d{0,18})-([1-9]\d{0,18})$/;
/** Base runs of each property, for the floor at the end of the file. */
const RUNS = { listEvents: 1000, streamEvents: 100, forgedIds: 200, resets: 30 };
/** The default EVENT_STREAMS_PER_KEY. */
const STREAMS_PER_KEY = 5;

/** Cursor texts: real ids, near misses and anything at all. */
function cursorText(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...ids),
    fc.constantFrom(...ids).map((id) => id.replace('-', '_')),
    fc.constantFrom(...ids).map((id) => `${id}0`),
    fc.constantFrom('0-0', '-1', '1--1', '9223372036854775808-1', '1-9223372036854775808', ' 0-1'),
    fc
      .tuple(fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.bigInt({ min: 0n, max: 2n ** 64n }))
      .map(([tx, seq]) => `${tx}-${seq}`),
    fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
  );
}

function isServable(engine: Engine, id: string): boolean {
  const match = EVENT_ID.exec(id);
  return (
    match !== null &&
    BigInt(match[1]) <= MAX_BIGINT &&
    BigInt(match[2]) <= MAX_BIGINT &&
    issuesTx(engine, BigInt(match[1]))
  );
}

describe.each(ENGINES)('hostile input to the events feed and stream [%s]', (engine) => {
  let app: HostileApp;
  let ids: string[];
  let baseUrl: string;

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    await app.seedPets(30);
    const page = await app.t.request('GET', '/v1/events?limit=100');
    ids = page.json<{ id: string }[]>().map((event) => event.id);
    await app.t.app.listen(0, '127.0.0.1');
    baseUrl = await app.t.app.getUrl();
  });
  afterAll(() => app?.close());

  it('listEvents: any after and limit is a 200 from right after the cursor, or a 400', async () => {
    const request = fc.record({
      after: fc.option(cursorText(ids), { nil: undefined }),
      limit: fc.option(
        fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.string({ maxLength: 6 })),
        { nil: undefined },
      ),
    });
    await assertProperty(
      'listEvents',
      engine,
      RUNS.listEvents,
      request,
      async ({ after, limit }) => {
        const query = new URLSearchParams({
          ...(after !== undefined && { after }),
          ...(limit !== undefined && { limit }),
        });
        const answer = await app.send(
          'GET',
          `/v1/events?${query.toString()}`,
          { headers: { authorization: app.bearer() } },
          { operation: listEvents, echoable: [...query.keys()] },
        );
        const goodLimit = limit === undefined || /^(100|[1-9]\d?)$/.test(limit);
        const goodAfter = after === undefined || isServable(engine, after);
        expect(answer.status, answer.body).toBe(goodLimit && goodAfter ? 200 : 400);
        if (answer.status !== 200) return;
        const served = (JSON.parse(answer.body) as { id: string }[]).map((event) => event.id);
        const from = after === undefined ? 0 : ids.indexOf(after) + 1;
        if (after === undefined || ids.includes(after))
          expect(served).toEqual(ids.slice(from, from + Number(limit ?? 20)));
        expect(answer.headers.link).toMatch(/^<\/v1\/events\?[^>]*limit=\d+>; rel="next"$/);
      },
    );
  });

  it('streamEvents: any Last-Event-ID opens the stream or is a 400, never a 5xx', async () => {
    await assertProperty(
      'streamEvents',
      engine,
      RUNS.streamEvents,
      cursorText(ids),
      async (lastEventId) => {
        countRequest();
        const abort = new AbortController();
        const response = await fetch(`${baseUrl}/v1/events/stream`, {
          headers: { authorization: app.bearer(), 'last-event-id': lastEventId.trim() },
          signal: abort.signal,
        });
        const servable = isServable(engine, lastEventId.trim());
        expect(response.status).toBe(servable ? 200 : 400);
        if (response.status === 400)
          expect(await response.json()).toEqual({
            code: 'VALIDATION_FAILED',
            message: 'Last-Event-ID must be the id of an event from this feed',
            status: 400,
          });
        abort.abort();
      },
    );
  });

  it('refuses an id this engine never issued, on the feed, after and Last-Event-ID: 400, and goes on answering', async () => {
    await assertProperty(
      'forged ids',
      engine,
      RUNS.forgedIds,
      forgedEventId(engine, ids),
      async (id) => {
        const feed = await app.send(
          'GET',
          `/v1/events?after=${encodeURIComponent(id)}`,
          { headers: { authorization: app.bearer() } },
          { operation: listEvents, echoable: ['after'] },
        );
        expect(feed.status, `${id}: ${feed.body}`).toBe(400);
        expect(JSON.parse(feed.body)).toEqual(refused('after'));
        for (const [headers, query, field] of [
          [{ 'last-event-id': id }, '', 'Last-Event-ID'],
          [{}, `?after=${encodeURIComponent(id)}`, 'after'],
        ] as const) {
          countRequest();
          const response = await fetch(`${baseUrl}/v1/events/stream${query}`, {
            headers: { authorization: app.bearer(), ...headers },
            signal: AbortSignal.timeout(5_000),
          });
          expect(response.status, `${field} ${id}`).toBe(400);
          expect(await response.json()).toEqual(refused(field));
        }
        countRequest();
        const live = await fetch(`${baseUrl}/health/live`, { signal: AbortSignal.timeout(5_000) });
        expect(live.status).toBe(200);
        await live.body?.cancel();
      },
    );
  });
});

describe.each(ENGINES)('connections reset while a stream opens [%s]', (engine) => {
  let t: HeldApp;
  let metricsUrl: string;
  let resumeFrom: string;

  beforeAll(async () => {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    t = await startHeldApp(engine, { ...HOSTILE_ENV, METRICS_PORT: String(metricsPort) });
    const created = await t.request('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(created.statusCode).toBe(201);
    // On PostgreSQL an event is served once the transactions older than its own have ended.
    for (const deadline = Date.now() + 5_000; !resumeFrom && Date.now() < deadline;)
      resumeFrom = (await t.request('GET', '/v1/events')).json<{ id: string }[]>()[0]?.id;
  });
  afterAll(() => t?.close());

  const openStreams = async () => {
    const text = await (await fetch(metricsUrl)).text();
    return Number(/^animal_store_event_streams_open (\d+)$/m.exec(text)![1]);
  };

  it(`counts no stream whose client reset it, at any stage: then ${STREAMS_PER_KEY} open`, async () => {
    const stages = fc.array(fc.constantFrom(...RESET_STAGES), {
      minLength: STREAMS_PER_KEY,
      maxLength: 2 * STREAMS_PER_KEY,
    });
    await assertProperty('stream resets', engine, RUNS.resets, stages, async (sequence) => {
      const { key } = await t.app.get(ApiKeyStore).create('reset');
      for (const stage of sequence) {
        countRequest();
        await resetStreamRequest(t, stage, key, resumeFrom);
      }
      expect(await openStreams(), sequence.join(', ')).toBe(0);
      const clients = [];
      try {
        for (let i = 0; i < STREAMS_PER_KEY; i++) {
          countRequest();
          const client = await openEventStream(`${t.baseUrl}/v1/events/stream`, {
            authorization: `Bearer ${key}`,
          });
          clients.push(client);
          expect(client.status, sequence.join(', ')).toBe(200);
        }
      } finally {
        for (const client of clients) client.close();
      }
      for (const deadline = Date.now() + 5_000; (await openStreams()) > 0;)
        if (Date.now() > deadline) throw new Error('closed streams still counted after 5 s');
    });
  });
});

describe('the hostile events run as a whole', () => {
  const floor = requestFloor(
    RUNS.listEvents + RUNS.streamEvents + 4 * RUNS.forgedIds + STREAMS_PER_KEY * RUNS.resets,
  );
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
