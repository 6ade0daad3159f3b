import type { LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undoMigrationsThrough } from '../../support/migrations.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const MIGRATION = 'IdempotencyResponses1796100000000';
const REX = { name: 'Rex', categoryId: 1, status: 'available' };
const TOM = { name: 'Tom', categoryId: 2 };

describe.each(ENGINES)('the migration storing idempotent responses [%s]', (engine) => {
  let t: TestApp;
  /** The first answers, to requests with the keys 'with-event' and 'without-event'. */
  let rex: Response;
  let tom: Response;

  const create = (body: object, key: string) =>
    t.request('POST', '/v1/pets', { body, headers: { 'idempotency-key': key } });
  const storedResponses = () =>
    t.dataSource.query<Record<string, unknown>[]>(
      'SELECT key, response_body, response_etag FROM idempotency_keys ORDER BY key',
    );

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    rex = await create(REX, 'with-event');
    tom = await create(TOM, 'without-event');
    // A pet made without a key has no claim for the migration to fill.
    await t.request('POST', '/v1/pets', { body: { name: 'Max', categoryId: 3 } });
    for (const { id } of [rex.json(), tom.json()]) {
      const changed = await t.request('PATCH', `/v1/pets/${id}`, {
        body: { name: `Sold ${id}`, status: 'sold' },
      });
      expect(changed.statusCode).toBe(200);
    }
    // Claims as stored before the migration; Tom's pet.created event is gone, as retention deletes.
    await undoMigrationsThrough(t.dataSource, MIGRATION);
    await t.dataSource.query(
      `DELETE FROM pet_events WHERE type = 'pet.created' AND pet_id = ${tom.json().id}`,
    );
    await t.dataSource.runMigrations();
  });
  afterAll(() => t?.close());

  it("fills a claim with its first response from its pet's pet.created event", async () => {
    expect(await storedResponses()).toEqual([
      { key: 'with-event', response_body: rex.body, response_etag: `"${rex.json().id}-1"` },
      { key: 'without-event', response_body: null, response_etag: null },
    ]);
    expect(rex.headers.etag).toBe(`"${rex.json().id}-1"`);
  });

  it('answers a retry of a filled claim with the first response', async () => {
    const replay = await create(REX, 'with-event');
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(rex.body);
    expect(replay.headers.etag).toBe(rex.headers.etag);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('answers a retry of a claim it could not fill with the pet as it is', async () => {
    const { id } = tom.json();
    const replay = await create(TOM, 'without-event');
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(`{"id":${id},"name":"Sold ${id}","categoryId":2,"status":"sold"}`);
    expect(replay.headers.etag).toBe(`"${id}-2"`);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('reverts: the columns go, the claims stay', async () => {
    await undoMigrationsThrough(t.dataSource, MIGRATION);
    const claims = await t.dataSource.query<Record<string, unknown>[]>(
      'SELECT * FROM idempotency_keys ORDER BY key',
    );
    expect(claims.map(({ key, pet_id }) => [key, Number(pet_id)])).toEqual([
      ['with-event', rex.json().id],
      ['without-event', tom.json().id],
    ]);
    expect(Object.keys(claims[0])).not.toContain('response_body');
    expect(Object.keys(claims[0])).not.toContain('response_etag');
  });
});
