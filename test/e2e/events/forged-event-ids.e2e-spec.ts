import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedEventId as refused } from '../../support/hostile-event-ids.js';
import { startDevServer, type DevServer } from '../../support/processes.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES, type Engine } from '../../support/test-database.js';

/**
 * Ids of the right form whose parts this engine never issues (docs/events.md, "The stream"): on
 * SQLite `tx` is always 0; on PostgreSQL it is a transaction id, never 0, 1 or 2 in any epoch
 * (the low 32 bits).
 */
const FORGED: Record<Engine, string[]> = {
  sqlite: ['1-1', '3-5', '9223372036854775807-1'],
  postgres: ['0-1', '1-1', '2-7', '4294967296-1', '4294967298-3'],
};

describe.each(ENGINES)('event ids this engine never issues [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
    for (let i = 0; i < 3; i++) {
      const created = await t.request('POST', '/v1/pets', {
        body: { name: `p${i}`, categoryId: 1 },
      });
      expect(created.statusCode).toBe(201);
    }
  });
  afterAll(() => t?.close());

  const stream = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}/v1/events/stream${query}`, {
      headers: { authorization: `Bearer ${t.key}`, ...headers },
      signal: AbortSignal.timeout(5_000),
    });

  it.each(FORGED[engine])(
    'refuses %s as the feed cursor, the stream after and Last-Event-ID: 400',
    async (id) => {
      const feed = await t.request('GET', `/v1/events?after=${id}`);
      expect(feed.statusCode).toBe(400);
      expect(feed.json()).toEqual(refused('after'));

      const byQuery = await stream(`?after=${id}`);
      expect(byQuery.status).toBe(400);
      expect(await byQuery.json()).toEqual(refused('after'));

      const byHeader = await stream('', { 'last-event-id': id });
      expect(byHeader.status).toBe(400);
      expect(await byHeader.json()).toEqual(refused('Last-Event-ID'));
    },
  );

  it('still serves from an id it issued', async () => {
    const ids = (await t.request('GET', '/v1/events')).json<{ id: string }[]>().map((e) => e.id);
    const page = await t.request('GET', `/v1/events?after=${ids[0]}`);
    expect(page.json<{ id: string }[]>().map((e) => e.id)).toEqual(ids.slice(1));
  });
});

/**
 * The built server in its own process, so a request that made it spin fails this test instead of
 * hanging the suite: every request has a deadline, and the server must still answer /health/live.
 */
describe('a forged event id on a server holding more than a page of events (node dist/main.js) [sqlite]', () => {
  let dev: DevServer;
  const auth = () => ({ authorization: `Bearer ${dev.key}` });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${dev.server.baseUrl}${path}`, {
      headers: { ...auth(), ...headers },
      signal: AbortSignal.timeout(3_000),
    });

  beforeAll(async () => {
    dev = await startDevServer({ RATE_LIMIT_PER_MINUTE: '0' });
    for (let i = 0; i < 150; i++) {
      const created = await fetch(`${dev.server.baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ name: `p${i}`, categoryId: 1 }),
      });
      expect(created.status).toBe(201);
    }
  });
  afterAll(() => dev?.stop());

  it('refuses after=1-1 and Last-Event-ID: 1-1 with a 400, and the process goes on answering', async () => {
    const byQuery = await get('/v1/events/stream?after=1-1');
    expect(byQuery.status).toBe(400);
    expect(await byQuery.json()).toEqual(refused('after'));
    const byHeader = await get('/v1/events/stream', { 'last-event-id': '1-1' });
    expect(byHeader.status).toBe(400);
    expect(await byHeader.json()).toEqual(refused('Last-Event-ID'));
    const feed = await get('/v1/events?after=1-1');
    expect(feed.status).toBe(400);
    expect(await feed.json()).toEqual(refused('after'));

    expect((await get('/health/live')).status).toBe(200);
  });
});
