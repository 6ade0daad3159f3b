import { betterSqlite3 } from '../../../src/database/better-sqlite3.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asJson,
  auth,
  json,
  send,
  SEEDED_PETS,
  startParityPair,
  type CaseRequest,
  type Headers,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

const Database = betterSqlite3();

/** A `pet_events` row as compared: everything but its position and timestamp. */
interface EventRow {
  type: string;
  petId: string;
  pet: string;
  previous: string | null;
}

/**
 * The event write (docs/events.md): for the same creates and patches, the reference writes the
 * same `pet_events` rows as the service, in the same order; a refused patch or one that changes
 * nothing writes none. The reference does not mirror Idempotency-Key (bench/reference/server.mjs),
 * so a replay goes to the service alone, which must write no event for it: the two tables then
 * still agree.
 */
describe.each(ENGINES)('bench reference writes the events the service writes [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  const asMergePatch = { ...auth, 'content-type': 'application/merge-patch+json' };
  const patch = (body: unknown, headers: Headers = {}): CaseRequest => ({
    headers: { ...asMergePatch, ...headers },
    body: JSON.stringify(body),
  });
  const path = (id: number) => `/v1/pets/${id}`;
  const created = (n: number) => SEEDED_PETS + n;

  // Run in this order, so the pets created get the same ids on both.
  const cases: ParityCase[] = [
    [
      'create, all fields',
      201,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 7, status: 'available' }),
    ],
    ['create, no status', 201, 'POST', '/v1/pets', json({ name: 'Tom', categoryId: 2 })],
    [
      'create, odd characters',
      201,
      'POST',
      '/v1/pets',
      json({ name: 'Ünï "q" \\ \n🐶', categoryId: 3 }),
    ],
    ['a refused create', 400, 'POST', '/v1/pets', json({ name: '', categoryId: 1 })],
    ['rename', 200, 'PATCH', path(created(1)), patch({ name: 'Max' })],
    ['name and category', 200, 'PATCH', path(created(1)), patch({ name: 'Bella', categoryId: 9 })],
    ['status where there was none', 200, 'PATCH', path(created(2)), patch({ status: 'pending' })],
    [
      'every member at once',
      200,
      'PATCH',
      path(created(2)),
      patch({ name: 'Z', categoryId: 5, status: 'sold' }),
    ],
    ['a patch that changes nothing', 200, 'PATCH', path(created(1)), patch({ name: 'Bella' })],
    ['a refused transition', 409, 'PATCH', path(created(2)), patch({ status: 'available' })],
    [
      'a stale If-Match',
      412,
      'PATCH',
      path(created(1)),
      patch({ name: 'Old' }, { 'if-match': `"${created(1)}-1"` }),
    ],
    ['an unknown pet', 404, 'PATCH', path(999_999), patch({ name: 'Nobody' })],
    ['an invalid patch', 400, 'PATCH', path(created(1)), patch({ categoryId: 0 })],
    ['a seeded pet with an odd name', 200, 'PATCH', path(3), patch({ categoryId: 9 })],
    ['a seeded pet to sold', 200, 'PATCH', path(5), patch({ status: 'sold' })],
    ['a seeded pet without a status', 200, 'PATCH', path(2), patch({ name: 'Nameless' })],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-events-${n}`);
    },
  );

  it('an idempotent create writes one event, its replay none', async () => {
    const before = await eventsOf(pair.databaseUrls.service);
    const body = JSON.stringify({ name: 'Once', categoryId: 4, status: 'available' });
    const post = () =>
      fetch(`${pair.service.baseUrl}/v1/pets`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${pair.key}`,
          'content-type': 'application/json',
          'idempotency-key': 'parity-events-once',
        },
        body,
      });
    const first = await post();
    expect(first.status).toBe(201);
    const replay = await post();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const pet = await first.json();
    expect(await replay.clone().json()).toEqual(pet);
    const after = await eventsOf(pair.databaseUrls.service);
    expect(after.slice(before.length)).toEqual([
      {
        type: 'pet.created',
        petId: String(created(4)),
        pet: `{"id":${created(4)},"name":"Once","categoryId":4,"status":"available"}`,
        previous: null,
      },
    ]);
    // The reference, which does not read the key, makes the same pet with the same event. (Not
    // through expectSameAnswer: the service would make a second pet.)
    const fromReference = await send(pair.reference.baseUrl, {
      method: 'POST',
      path: '/v1/pets',
      headers: pair.withKeys(asJson),
      body,
    });
    expect(fromReference.status).toBe(201);
    expect(JSON.parse(fromReference.body)).toEqual(pet);
  });

  it('both wrote the same events, in the same order, and nothing else', async () => {
    const fromService = await eventsOf(pair.databaseUrls.service);
    const fromReference = await eventsOf(pair.databaseUrls.reference);
    expect(fromReference).toEqual(fromService);
    // 3 creates, 7 changes, the idempotent create: no refusal, no-op or replay wrote a row.
    expect(fromService.map((e) => `${e.type} ${e.petId}`)).toEqual([
      `pet.created ${created(1)}`,
      `pet.created ${created(2)}`,
      `pet.created ${created(3)}`,
      `pet.updated ${created(1)}`,
      `pet.updated ${created(1)}`,
      `pet.updated ${created(2)}`,
      `pet.updated ${created(2)}`,
      'pet.updated 3',
      'pet.updated 5',
      'pet.updated 2',
      `pet.created ${created(4)}`,
    ]);
    expect(fromService[5].previous).toBe('{"status":null}');
    expect(fromService[6].previous).toBe('{"name":"Tom","categoryId":2,"status":"pending"}');
  });
});

/** The `pet_events` rows of a database in their order, positions and timestamps left out. */
async function eventsOf(url: string): Promise<EventRow[]> {
  const sql = 'SELECT type, pet_id, pet, previous FROM pet_events ORDER BY tx, seq';
  const toRow = (row: Record<string, unknown>): EventRow => ({
    type: row.type as string,
    petId: String(row.pet_id),
    pet: row.pet as string,
    previous: row.previous as string | null,
  });
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare(sql).all() as Record<string, unknown>[]).map(toRow);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows.map(toRow);
  } finally {
    await client.end();
  }
}
