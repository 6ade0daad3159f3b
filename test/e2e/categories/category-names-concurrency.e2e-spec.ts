import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clearEvents,
  feedEvents,
  statusCounts,
  storedCategories,
} from '../../support/catalogue-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const CLAIMS = 30;

describe.each(ENGINES)('category names under concurrency [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM categories');
    await clearEvents(t);
  });

  const claim = (app: NestFastifyApplication, id: number, name: string, ifMatch?: string) =>
    app.inject({
      method: 'PUT',
      url: `/v1/categories/${id}`,
      headers: {
        authorization: `Bearer ${t.key}`,
        'content-type': 'application/json',
        ...(ifMatch && { 'if-match': ifMatch }),
      },
      payload: JSON.stringify({ name }),
    });

  /** Of the claims, the one 201's id, after checking that all the others were 409. */
  async function expectOneWinner(responses: { statusCode: number; json(): unknown }[]) {
    expect(statusCounts(responses)).toEqual({ 201: 1, 409: CLAIMS - 1 });
    const winner = responses.find(({ statusCode }) => statusCode === 201)!.json() as {
      id: number;
    };
    expect(await storedCategories(t)).toEqual([{ id: winner.id, name: 'Dogs', revision: 1 }]);
    const events = await feedEvents(t, 1);
    expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'category.updated', data: { category: { id: winner.id, name: 'Dogs' } } },
    ]);
  }

  it(`of ${CLAIMS} concurrent claims of one name on different ids exactly one wins`, async () => {
    const responses = await Promise.all(
      Array.from({ length: CLAIMS }, (_, i) => claim(t.app, i + 1, 'Dogs')),
    );
    await expectOneWinner(responses);
  });

  it(`of ${CLAIMS} concurrent namings of one id, one is 201 and the others rename it`, async () => {
    const responses = await Promise.all(
      Array.from({ length: CLAIMS }, (_, i) => claim(t.app, 5, `Dogs ${i}`)),
    );
    expect(statusCounts(responses)).toEqual({ 201: 1, 200: CLAIMS - 1 });
    const [stored] = await storedCategories(t);
    expect(stored.revision).toBe(CLAIMS);
    expect((await feedEvents(t, CLAIMS)).length).toBe(CLAIMS);
  });

  it(`of ${CLAIMS} concurrent renames of one id with its ETag, one is 200 and the others 412`, async () => {
    const named = await claim(t.app, 5, 'Dogs');
    const responses = await Promise.all(
      Array.from({ length: CLAIMS }, (_, i) => claim(t.app, 5, `Dogs ${i}`, named.headers.etag)),
    );
    expect(statusCounts(responses)).toEqual({ 200: 1, 412: CLAIMS - 1 });
    const winner = responses.find(({ statusCode }) => statusCode === 200)!.json();
    expect(await storedCategories(t)).toEqual([{ ...winner, revision: 2 }]);
    expect((await feedEvents(t, 2)).length).toBe(2);
  });

  // Two app instances, each with its own pool, on one PostgreSQL (SQLite is one process's).
  describe.runIf(engine === 'postgres')('across two instances', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it(`of ${CLAIMS} claims of one name split over both, exactly one wins`, async () => {
      const responses = await Promise.all(
        Array.from({ length: CLAIMS }, (_, i) => claim(i % 2 ? second : t.app, i + 1, 'Dogs')),
      );
      await expectOneWinner(responses);
    });
  });
});
