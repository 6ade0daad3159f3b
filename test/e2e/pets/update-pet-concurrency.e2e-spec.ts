import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LightMyRequestResponse as Response } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const SALES = 50;

const statusesOf = (responses: Response[]) =>
  responses.reduce<Record<number, number>>((counts, { statusCode }) => {
    counts[statusCode] = (counts[statusCode] ?? 0) + 1;
    return counts;
  }, {});

describe.each(ENGINES)('updatePet under concurrency [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const sell = (app: NestFastifyApplication, id: number, ifMatch?: string) =>
    app.inject({
      method: 'PATCH',
      url: `/v1/pets/${id}`,
      headers: {
        authorization: `Bearer ${t.key}`,
        'content-type': 'application/merge-patch+json',
        ...(ifMatch && { 'if-match': ifMatch }),
      },
      payload: '{"status":"sold"}',
    });

  const storedRevision = async (id: number) =>
    (await t.dataSource.query(`SELECT status, revision FROM pets WHERE id = ${id}`)).map(
      (row: { status: string; revision: number | string }) => ({
        status: row.status,
        revision: Number(row.revision),
      }),
    )[0];

  it(`of ${SALES} concurrent sales of one pet exactly one is 200, the rest 409`, async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });

    const responses = await Promise.all(Array.from({ length: SALES }, () => sell(t.app, pet.id)));

    expect(statusesOf(responses)).toEqual({ 200: 1, 409: SALES - 1 });
    for (const refused of responses.filter((r) => r.statusCode === 409)) {
      expect(refused.json()).toEqual({
        code: 'INVALID_TRANSITION',
        message: `Pet ${pet.id} is sold: its status can no longer change (asked for sold)`,
        status: 409,
      });
    }
    expect(await storedRevision(pet.id)).toEqual({ status: 'sold', revision: 2 });
  });

  it(`of ${SALES} concurrent sales with the same If-Match exactly one is 200, the rest 412`, async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'pending' });

    const responses = await Promise.all(
      Array.from({ length: SALES }, () => sell(t.app, pet.id, `"${pet.id}-1"`)),
    );

    expect(statusesOf(responses)).toEqual({ 200: 1, 412: SALES - 1 });
    expect(await storedRevision(pet.id)).toEqual({ status: 'sold', revision: 2 });
  });

  it('concurrent renames and sales lose no change: one revision per 200', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const renames = Array.from({ length: SALES / 2 }, (_, i) =>
      t.app.inject({
        method: 'PATCH',
        url: `/v1/pets/${pet.id}`,
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: `Rex ${i}` }),
      }),
    );
    const sales = Array.from({ length: SALES / 2 }, () => sell(t.app, pet.id));

    const responses = await Promise.all([...renames, ...sales]);

    expect(statusesOf(responses.slice(0, SALES / 2))).toEqual({ 200: SALES / 2 });
    expect(statusesOf(responses.slice(SALES / 2))).toEqual({ 200: 1, 409: SALES / 2 - 1 });
    expect(await storedRevision(pet.id)).toEqual({ status: 'sold', revision: 2 + SALES / 2 });
  });

  // Two processes' worth of app, each with its own connection pool, on one PostgreSQL: what a
  // load balancer in front of two replicas gives (SQLite is one process's database).
  describe.runIf(engine === 'postgres')('across two instances', () => {
    let second: NestFastifyApplication;
    beforeAll(async () => {
      second = await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => second?.close());

    it(`of ${SALES} sales split over both, exactly one is 200`, async () => {
      const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });

      const responses = await Promise.all(
        Array.from({ length: SALES }, (_, i) => sell(i % 2 === 0 ? t.app : second, pet.id)),
      );

      expect(statusesOf(responses)).toEqual({ 200: 1, 409: SALES - 1 });
      expect(await storedRevision(pet.id)).toEqual({ status: 'sold', revision: 2 });
    });
  });
});
