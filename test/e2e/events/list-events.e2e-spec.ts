import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { EventRetention } from '../../../src/events/event-retention.js';
import { createPet, nextPage } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

interface PetEvent {
  id: string;
  type: string;
  timestamp: string;
  data: { pet: Record<string, unknown>; previous?: Record<string, unknown> };
}

const EVENT_ID = /^\d+-\d+$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(ENGINES)('GET /v1/events (listEvents) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM pet_events');
    await t.dataSource.query('UPDATE pet_events_purged SET tx = 0, seq = 0');
  });

  /**
   * The next `count` events from `after` on, following the next links as a follower does, then
   * one more page, which must be empty. On PostgreSQL an event is served once every transaction
   * that began before its own has ended, anywhere on the server (docs/events.md, "Order"), so a
   * page may come back empty for a moment while other databases' transactions run.
   */
  async function follow(
    count: number,
    after?: string,
    limit = 100,
  ): Promise<{ events: PetEvent[]; last: string }> {
    const events: PetEvent[] = [];
    let url = `/v1/events?limit=${limit}${after ? `&after=${after}` : ''}`;
    const deadline = Date.now() + 5_000;
    while (events.length < count && Date.now() < deadline) {
      const page = await t.request('GET', url);
      expect(page.statusCode, page.body).toBe(200);
      url = nextPage(String(page.headers.link));
      events.push(...page.json<PetEvent[]>());
    }
    expect((await t.request('GET', url)).json()).toEqual([]);
    return { events, last: url };
  }

  const patch = (id: number, body: object, headers: Record<string, string> = {}) =>
    t.request('PATCH', `/v1/pets/${id}`, {
      body,
      headers: { 'content-type': 'application/merge-patch+json', ...headers },
    });

  it('records a pet.created with the pet, and a pet.updated with exactly the changed old values', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1 });
    await patch(pet.id, { status: 'available' });
    await patch(pet.id, { name: 'Max', categoryId: 2 });
    await patch(pet.id, { status: 'sold', name: 'Max' });

    const { events } = await follow(4);

    expect(events).toEqual([
      {
        id: expect.stringMatching(EVENT_ID),
        type: 'pet.created',
        timestamp: expect.stringMatching(TIMESTAMP),
        data: { pet: { id: pet.id, name: 'Rex', categoryId: 1 } },
      },
      {
        id: expect.stringMatching(EVENT_ID),
        type: 'pet.updated',
        timestamp: expect.stringMatching(TIMESTAMP),
        data: {
          pet: { id: pet.id, name: 'Rex', categoryId: 1, status: 'available' },
          previous: { status: null },
        },
      },
      {
        id: expect.stringMatching(EVENT_ID),
        type: 'pet.updated',
        timestamp: expect.stringMatching(TIMESTAMP),
        data: {
          pet: { id: pet.id, name: 'Max', categoryId: 2, status: 'available' },
          previous: { name: 'Rex', categoryId: 1 },
        },
      },
      {
        id: expect.stringMatching(EVENT_ID),
        type: 'pet.updated',
        timestamp: expect.stringMatching(TIMESTAMP),
        data: {
          pet: { id: pet.id, name: 'Max', categoryId: 2, status: 'sold' },
          previous: { status: 'available' },
        },
      },
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(4);
    const times = events.map((event) => Date.parse(event.timestamp));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('gives each of many creates sent at once its own pet and pet.created, in id order', async () => {
    const sent = Array.from({ length: 30 }, (_, i) => ({
      name: `Pet ${i} "quoted" \\ 🐶`,
      categoryId: i + 1,
      ...(i % 3 === 0 ? {} : { status: i % 3 === 1 ? 'available' : 'sold' }),
    }));

    const answers = await Promise.all(sent.map((body) => t.request('POST', '/v1/pets', { body })));

    const pets = answers.map((answer) => {
      expect(answer.statusCode, answer.body).toBe(201);
      return answer.json<{ id: number }>();
    });
    expect(pets).toEqual(sent.map((pet, i) => ({ id: pets[i].id, ...pet })));
    for (const pet of pets) {
      expect((await t.request('GET', `/v1/pets/${pet.id}`)).json()).toEqual(pet);
    }
    const { events } = await follow(sent.length);
    const byId = [...pets].sort((a, b) => a.id - b.id);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual(
      byId.map((pet) => ({ type: 'pet.created', data: { pet } })),
    );
    if (engine === 'postgres') {
      // They shared statements (pets.repository.ts): fewer transactions than creates.
      const [{ count }] = await t.dataSource.query(
        'SELECT count(DISTINCT tx)::int AS count FROM pet_events',
      );
      expect(count).toBeLessThan(sent.length);
    }
  });

  it('records nothing for a refused, a no-op or a replayed change', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'sold' });
    const replay = { body: { name: 'Bella', categoryId: 1 }, headers: { 'idempotency-key': 'k' } };
    expect((await t.request('POST', '/v1/pets', replay)).statusCode).toBe(201);
    expect((await t.request('POST', '/v1/pets', replay)).statusCode).toBe(201);
    expect((await patch(pet.id, { status: 'available' })).statusCode).toBe(409);
    expect((await patch(pet.id, { name: 'Max' }, { 'if-match': '"0-0"' })).statusCode).toBe(412);
    expect((await patch(pet.id, { name: 'Rex', categoryId: 1 })).statusCode).toBe(200);
    expect((await patch(pet.id, { name: '' })).statusCode).toBe(400);
    expect((await patch(9_999_999, { name: 'Max' })).statusCode).toBe(404);
    const readOnly = (await t.app.get(ApiKeyStore).create('ro', { scopes: ['pets:read'] })).key;
    const forbidden = await t.request('PATCH', `/v1/pets/${pet.id}`, {
      key: readOnly,
      body: { name: 'Max' },
    });
    expect(forbidden.statusCode).toBe(403);

    const { events } = await follow(2);

    expect(events.map((event) => [event.type, event.data.pet.name])).toEqual([
      ['pet.created', 'Rex'],
      ['pet.created', 'Bella'],
    ]);
  });

  it('pages with limit and a next link on every page, also the last and an empty one', async () => {
    for (let i = 0; i < 5; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });

    const first = await t.request('GET', '/v1/events?limit=2');
    const ids = first.json<PetEvent[]>().map((event) => event.id);
    expect(ids).toHaveLength(2);
    expect(first.headers.link).toBe(`</v1/events?after=${ids[1]}&limit=2>; rel="next"`);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers['cache-control']).toBe('no-store');

    const { events, last } = await follow(3, ids[1], 2);
    expect(events.map((event) => event.data.pet.name)).toEqual(['p2', 'p3', 'p4']);
    expect(last).toBe(`/v1/events?after=${events[2].id}&limit=2`);

    // Up to date: an empty page that links to the same position, which a later event fills.
    const empty = await t.request('GET', last);
    expect(empty.json()).toEqual([]);
    expect(empty.headers.link).toBe(`<${last}>; rel="next"`);
    await createPet(t, { name: 'later', categoryId: 1 });
    const later = await follow(1, events[2].id, 2);
    expect(later.events.map((event) => event.data.pet.name)).toEqual(['later']);
  });

  it('links an empty feed to itself', async () => {
    const empty = await t.request('GET', '/v1/events');
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual([]);
    expect(empty.headers.link).toBe('</v1/events?limit=20>; rel="next"');
  });

  it.each(['', 'abc', '1', '-1', '01-1', '1-0', '1-01', '1-1-1', '99999999999999999999-1', '1 -1'])(
    'refuses the malformed after %j: 400',
    async (after) => {
      const response = await t.request('GET', `/v1/events?after=${encodeURIComponent(after)}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'after must be the id of an event from this feed',
        status: 400,
      });
    },
  );

  it.each([
    ['limit=0', 'limit must be a decimal integer from 1 to 100'],
    ['limit=101', 'limit must be a decimal integer from 1 to 100'],
    ['after=1-1&after=1-2', 'after must be given at most once'],
    ['since=1', 'since is not a known field'],
  ])('refuses %s: 400', async (query, message) => {
    const response = await t.request('GET', `/v1/events?${query}`);
    expect(response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
  });

  it('answers 410 CURSOR_EXPIRED for a cursor before what retention deleted', async () => {
    for (let i = 0; i < 3; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    const { events } = await follow(3);
    const [tx, seq] = events[1].id.split('-');
    await t.dataSource.query(`DELETE FROM pet_events WHERE seq <= ${seq}`);
    await t.dataSource.query(`UPDATE pet_events_purged SET tx = ${tx}, seq = ${seq}`);

    const expired = await t.request('GET', `/v1/events?after=${events[0].id}`);
    expect(expired.statusCode).toBe(410);
    expect(expired.json()).toEqual({
      code: 'CURSOR_EXPIRED',
      message:
        'Events after this cursor were deleted (older than the retention period); read the feed again without after',
      status: 410,
    });
    const atThePurge = await t.request('GET', `/v1/events?after=${events[1].id}`);
    expect(atThePurge.json<PetEvent[]>().map((event) => event.id)).toEqual([events[2].id]);
    expect((await follow(1)).events.map((event) => event.id)).toEqual([events[2].id]);
  });

  it(`keeps EVENT_RETENTION_DAYS of events: older ones are deleted, and their cursors expire`, async () => {
    for (let i = 0; i < 4; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    const { events } = await follow(4);
    const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000).toISOString();
    const [, seq] = events[1].id.split('-');
    await t.dataSource.query(`UPDATE pet_events SET occurred_at = '${old}' WHERE seq <= ${seq}`);

    await Promise.all([1, 2].map(() => t.app.get(EventRetention).deleteExpiredEvents()));

    expect((await follow(2)).events.map((event) => event.id)).toEqual(
      events.slice(2).map((event) => event.id),
    );
    expect((await t.request('GET', `/v1/events?after=${events[0].id}`)).statusCode).toBe(410);
    const fromTheLastDeleted = await t.request('GET', `/v1/events?after=${events[1].id}`);
    expect(fromTheLastDeleted.json<PetEvent[]>().map((event) => event.id)).toEqual(
      events.slice(2).map((event) => event.id),
    );
  });

  it('keeps the newest event even when all are past retention, so ids never go back', async () => {
    for (let i = 0; i < 3; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    const { events } = await follow(3);
    const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000).toISOString();
    await t.dataSource.query(`UPDATE pet_events SET occurred_at = '${old}'`);

    await t.app.get(EventRetention).deleteExpiredEvents();

    expect((await follow(1)).events.map((event) => event.id)).toEqual([events[2].id]);
    expect((await t.request('GET', `/v1/events?after=${events[0].id}`)).statusCode).toBe(410);
    const later = await createPet(t, { name: 'later', categoryId: 1 });
    const fromTheNewest = await t.request('GET', `/v1/events?after=${events[2].id}`);
    expect(fromTheNewest.json<PetEvent[]>().map((event) => event.data.pet.id)).toEqual([later.id]);
  });

  it('needs a key with pets:read', async () => {
    expect((await t.request('GET', '/v1/events', { key: null })).statusCode).toBe(401);
    const writeOnly = (await t.app.get(ApiKeyStore).create('wo', { scopes: ['pets:write'] })).key;
    const forbidden = await t.request('GET', '/v1/events', { key: writeOnly });
    expect(forbidden.json()).toEqual({
      code: 'FORBIDDEN',
      message: 'This API key lacks the scope pets:read',
      status: 403,
    });
  });
});
