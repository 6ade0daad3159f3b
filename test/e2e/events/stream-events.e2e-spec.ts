import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { openEventStream, type StreamMessage } from '../../support/event-stream-client.js';
import { createPet } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const STREAMS_PER_KEY = 2;

describe.each(ENGINES)('GET /v1/events/stream (streamEvents) [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, {
      RATE_LIMIT_PER_MINUTE: '0',
      EVENT_STREAMS_PER_KEY: String(STREAMS_PER_KEY),
      EVENT_STREAM_HEARTBEAT_SECONDS: '1',
    });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const auth = (key = t.key) => ({ authorization: `Bearer ${key}` });
  const stream = (query = '', headers: Record<string, string> = {}, key = t.key) =>
    openEventStream(`${baseUrl}/v1/events/stream${query}`, { ...auth(key), ...headers });
  const sell = (id: number) =>
    t.request('PATCH', `/v1/pets/${id}`, {
      body: { status: 'sold' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  /** The feed's events, for comparing with what the stream sent. */
  const feed = async () =>
    (await t.request('GET', '/v1/events?limit=100')).json<
      { id: string; data: { pet: { id: number } } }[]
    >();
  /**
   * Creates a pet and waits until the feed serves its event: on PostgreSQL an event is served once
   * every transaction on the server that began before it has ended, other databases' included.
   */
  const createServed = async (body: { name: string; categoryId: number }) => {
    const pet = await createPet(t, body);
    const served = async () => (await feed()).some((event) => event.data.pet.id === pet.id);
    while (!(await served())) await new Promise((resolve) => setTimeout(resolve, 20));
    return pet;
  };

  it('sends the events committed from now on, each as id, event and data lines, in the feed form', async () => {
    await createServed({ name: 'before', categoryId: 1 });
    const client = await stream();
    try {
      expect(client.status).toBe(200);
      expect(client.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(client.headers.get('cache-control')).toBe('no-store');
      // At once: a change committed after the client has the headers is on the stream.
      const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
      await sell(pet.id);

      const [created, sold] = await client.events(2, 2_000);

      const events = await feed();
      const fromFeed = events.slice(-2);
      expect(created).toEqual({
        id: fromFeed[0].id,
        event: 'pet.created',
        data: JSON.stringify(fromFeed[0]),
      });
      expect(sold).toEqual({
        id: fromFeed[1].id,
        event: 'pet.updated',
        data: JSON.stringify(fromFeed[1]),
      });
      expect(client.messages[0]).toEqual({ comment: 'connected' });
    } finally {
      client.close();
    }
  });

  it('resumes right after Last-Event-ID, or after=, with no gap and no repeat', async () => {
    for (let i = 0; i < 5; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    const events = await feed();
    const last5 = events.slice(-5);

    const byHeader = await stream('', { 'last-event-id': last5[1].id });
    const byQuery = await stream(`?after=${last5[3].id}`);
    try {
      const resumed = await byHeader.events(3);
      expect(resumed.map((message) => message.id)).toEqual(last5.slice(2).map((e) => e.id));
      expect((await byQuery.events(1)).map((message) => message.id)).toEqual([last5[4].id]);
      // Then new events, each once.
      const more = await createPet(t, { name: 'later', categoryId: 1 });
      const [, , , next] = await byHeader.events(4);
      expect(JSON.parse(next.data!).data.pet).toEqual(more);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const ids = byHeader.messages.filter((m) => m.id).map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(4);
    } finally {
      byHeader.close();
      byQuery.close();
    }
  });

  it('a Last-Event-ID beyond every event waits for later ones, and does not hold back other streams', async () => {
    await createServed({ name: 'first', categoryId: 1 });
    // Two keys: three streams are over one key's limit here.
    const otherKey = (await t.app.get(ApiKeyStore).create('ahead')).key;
    // Beyond every event, yet of the form this engine issues: SQLite's tx is always 0.
    const beyond = engine === 'sqlite' ? '0-9223372036854775807' : '9223372036854775807-1';
    const ahead = await stream('', { 'last-event-id': beyond }, otherKey);
    const fromNow = await stream();
    const behind = await stream('', { 'last-event-id': (await feed()).at(-1)!.id });
    try {
      const pet = await createPet(t, { name: 'next', categoryId: 1 });
      const [event] = await fromNow.events(1, 2_000);
      expect(JSON.parse(event.data!).data.pet).toEqual(pet);
      expect(JSON.parse((await behind.events(1, 2_000))[0].data!).data.pet).toEqual(pet);
      expect(ahead.messages.filter((message) => message.id)).toEqual([]);
    } finally {
      for (const client of [ahead, fromNow, behind]) client.close();
      // The server hears of the closes a moment later; the next test opens streams on this key.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it('sends a comment line as a heartbeat while idle', async () => {
    const client = await stream();
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_300));
      const comments = client.messages.filter((m: StreamMessage) => m.comment === 'keep-alive');
      expect(comments.length).toBeGreaterThanOrEqual(2);
    } finally {
      client.close();
    }
  });

  it(`allows ${STREAMS_PER_KEY} open streams per key; the next gets 429, and a closed one frees its place`, async () => {
    const open = [await stream(), await stream()];
    const refused = await fetch(`${baseUrl}/v1/events/stream`, { headers: auth() });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      code: 'RATE_LIMITED',
      message: `This API key already has ${STREAMS_PER_KEY} open event streams (the most allowed); close one first`,
      status: 429,
    });
    const otherKey = (await t.app.get(ApiKeyStore).create('other')).key;
    const other = await stream('', {}, otherKey);
    expect(other.status).toBe(200);
    open[0].close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await stream();
    expect(again.status).toBe(200);
    for (const client of [open[1], other, again]) client.close();
  });

  it.each([
    [
      'a malformed Last-Event-ID',
      { 'last-event-id': 'abc' },
      '',
      'Last-Event-ID must be the id of an event from this feed',
    ],
    ['a malformed after', {}, '?after=1', 'after must be the id of an event from this feed'],
  ])('refuses %s: 400', async (_case, headers, query, message) => {
    const response = await fetch(`${baseUrl}/v1/events/stream${query}`, {
      headers: { ...auth(), ...headers },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
  });

  it('needs a key with pets:read', async () => {
    const anonymous = await fetch(`${baseUrl}/v1/events/stream`);
    expect(anonymous.status).toBe(401);
    await anonymous.body?.cancel();
    const writeOnly = (await t.app.get(ApiKeyStore).create('wo', { scopes: ['pets:write'] })).key;
    const forbidden = await fetch(`${baseUrl}/v1/events/stream`, { headers: auth(writeOnly) });
    expect(forbidden.status).toBe(403);
    await forbidden.body?.cancel();
  });

  it.runIf(engine === 'postgres')(
    'answers only once it has read where now is: a slow read holds the headers back, not the events after them',
    async () => {
      // The lock stands in for a slow database: the read of the newest event waits behind it.
      const slow = t.dataSource.createQueryRunner();
      await slow.connect();
      let opening: ReturnType<typeof stream> | undefined;
      try {
        await slow.startTransaction();
        await slow.query('LOCK TABLE pet_events IN ACCESS EXCLUSIVE MODE');
        opening = stream();
        const first = await Promise.race([
          opening.then(() => 'headers'),
          new Promise((resolve) => setTimeout(resolve, 500, 'nothing yet')),
        ]);
        expect(first).toBe('nothing yet');
      } finally {
        await slow.rollbackTransaction();
        await slow.release();
      }
      const client = await opening;
      try {
        expect(client.status).toBe(200);
        const pet = await createPet(t, { name: 'right after', categoryId: 1 });
        const [event] = await client.events(1, 2_000);
        expect(JSON.parse(event.data!).data.pet).toEqual(pet);
      } finally {
        client.close();
      }
    },
  );

  describe.runIf(engine === 'postgres')('across two instances on one database', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it('delivers a change committed through the other instance within 1 s', async () => {
      const client = await stream();
      try {
        const started = Date.now();
        const created = await second.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...auth(), 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'elsewhere', categoryId: 1 }),
        });
        expect(created.statusCode).toBe(201);
        const [event] = await client.events(1, 1_000);
        expect(Date.now() - started).toBeLessThan(1_000);
        expect(JSON.parse(event.data!).data.pet).toEqual(created.json());
      } finally {
        client.close();
      }
    });
  });
});

describe.each(ENGINES)('a stream catching up on more than a megabyte of events [%s]', (engine) => {
  const EVENTS = 5_000;
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
  });
  afterAll(() => t?.close());

  it(`sends all ${EVENTS} events to a client that reads them as fast as they come, in order, once`, async () => {
    const first = await createPet(t, { name: 'first', categoryId: 1 });
    // On PostgreSQL an event is served once the transactions older than its own have ended.
    let from: string | undefined;
    for (const deadline = Date.now() + 5_000; from === undefined && Date.now() < deadline;)
      from = (await t.request('GET', '/v1/events')).json<{ id: string }[]>()[0]?.id;
    // About 450 bytes each on the wire: some 2 MB in all, twice the limit of a client that lags.
    const name = 'n'.repeat(240);
    for (let batch = 0; batch < EVENTS / 100; batch++) {
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          t.request('POST', '/v1/pets', {
            body: { name: `${batch * 100 + i} ${name}`, categoryId: 1 },
          }),
        ),
      );
      expect(created.map((response) => response.statusCode)).toEqual(created.map(() => 201));
    }

    const client = await openEventStream(`${baseUrl}/v1/events/stream`, {
      authorization: `Bearer ${t.key}`,
      'last-event-id': from!,
    });
    try {
      expect(client.status).toBe(200);
      const events = await client.events(EVENTS, 30_000);
      const pets = events.map(
        (event) => (JSON.parse(event.data!) as { data: { pet: { id: number } } }).data.pet.id,
      );
      expect(new Set(client.ids()).size).toBe(EVENTS);
      expect(pets[0]).toBeGreaterThan(first.id);
      expect(new Set(pets).size).toBe(EVENTS);
    } finally {
      client.close();
    }
  }, 90_000);
});

describe('event streams when the instance stops [sqlite]', () => {
  it('ends every stream cleanly on close, so clients reconnect elsewhere', async () => {
    const t = await startTestApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    const client = await openEventStream(`${await t.app.getUrl()}/v1/events/stream`, {
      authorization: `Bearer ${t.key}`,
    });
    expect(client.status).toBe(200);
    const started = Date.now();
    await t.close();
    await client.ended;
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
