import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import {
  assertProperty,
  countRequest,
  expectRequestsSent,
  requestFloor,
} from '../../support/hostile-run.js';
import { OpenApiDocument } from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to the change feed and the stream: any `after`, `limit` and `Last-Event-ID` gets a
 * 200 or a 400 naming the field, never a 5xx. An id this service made, of an event it keeps, is
 * served from right after it. Seed and run scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const listEvents = doc.operation('listEvents');
const EVENT_ID = /^(0|[1-9]\d{0,18})-([1-9]\d{0,18})$/;

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

function isServable(id: string): boolean {
  const match = EVENT_ID.exec(id);
  return match !== null && BigInt(match[1]) < 2n ** 63n && BigInt(match[2]) < 2n ** 63n;
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
    await assertProperty('listEvents', engine, 1000, request, async ({ after, limit }) => {
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
      const goodAfter = after === undefined || isServable(after);
      expect(answer.status, answer.body).toBe(goodLimit && goodAfter ? 200 : 400);
      if (answer.status !== 200) return;
      const served = (JSON.parse(answer.body) as { id: string }[]).map((event) => event.id);
      const from = after === undefined ? 0 : ids.indexOf(after) + 1;
      if (after === undefined || ids.includes(after))
        expect(served).toEqual(ids.slice(from, from + Number(limit ?? 20)));
      expect(answer.headers.link).toMatch(/^<\/v1\/events\?[^>]*limit=\d+>; rel="next"$/);
    });
  });

  it('streamEvents: any Last-Event-ID opens the stream or is a 400, never a 5xx', async () => {
    await assertProperty('streamEvents', engine, 100, cursorText(ids), async (lastEventId) => {
      countRequest();
      const abort = new AbortController();
      const response = await fetch(`${baseUrl}/v1/events/stream`, {
        headers: { authorization: app.bearer(), 'last-event-id': lastEventId.trim() },
        signal: abort.signal,
      });
      const servable = isServable(lastEventId.trim());
      expect(response.status).toBe(servable ? 200 : 400);
      if (response.status === 400)
        expect(await response.json()).toEqual({
          code: 'VALIDATION_FAILED',
          message: 'Last-Event-ID must be the id of an event from this feed',
          status: 400,
        });
      abort.abort();
    });
  });
});

describe('the hostile events run as a whole', () => {
  const floor = requestFloor(1000 + 100);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
