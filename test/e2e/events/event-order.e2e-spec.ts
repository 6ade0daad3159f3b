import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inParallel } from '../../support/http-client.js';
import { nextPage } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

interface PetEvent {
  id: string;
  type: string;
  data: { pet: { id: number; name: string } };
}

const CREATES = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The feed's promise (docs/events.md, "Order"): a follower that polls while changes commit
 * concurrently, through every instance, sees every event exactly once and in one order. On
 * PostgreSQL, ids from a sequence are taken before commit, so a feed that served rows as they
 * became visible would serve event 6 before event 5 commits and then never serve 5.
 */
describe.each(ENGINES)('the feed while writers commit concurrently [%s]', (engine) => {
  let t: TestApp;
  let second: NestFastifyApplication | undefined;
  let instances: NestFastifyApplication[];

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    // Two instances on one database, as behind a load balancer; SQLite is one process's database.
    second =
      engine === 'postgres'
        ? await startSecondInstance(t, { RATE_LIMIT_PER_MINUTE: '0' })
        : undefined;
    instances = second ? [t.app, second] : [t.app];
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
  });

  const headers = () => ({ authorization: `Bearer ${t.key}` });

  it(`serves each of ${CREATES} creates and their sales exactly once, in one order, to a follower polling throughout`, async () => {
    let writing = true;
    let expected = Infinity;
    const seen: PetEvent[] = [];
    let url = '/v1/events?limit=50';
    const follower = (async () => {
      let deadline = Infinity;
      for (let turn = 0; writing || seen.length < expected; turn++) {
        if (!writing) deadline = Math.min(deadline, Date.now() + 10_000);
        if (Date.now() > deadline) break;
        const instance = instances[turn % instances.length];
        const page = await instance.inject({ method: 'GET', url, headers: headers() });
        expect(page.statusCode, page.body).toBe(200);
        url = nextPage(String(page.headers.link));
        seen.push(...page.json<PetEvent[]>());
        // A follower polls now and then; in one process it must also let the writers run.
        await sleep(2);
      }
    })();

    const created = await inParallel(CREATES, 16, async (i) => {
      const instance = instances[i % instances.length];
      const response = await instance.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...headers(), 'content-type': 'application/json' },
        payload: JSON.stringify({ name: `pet ${i}`, categoryId: 1, status: 'available' }),
      });
      expect(response.statusCode).toBe(201);
      const id = response.json<{ id: number }>().id;
      // Half of them sold at once, from the other instance.
      if (i % 2 === 0) {
        const sold = await instances[(i + 1) % instances.length].inject({
          method: 'PATCH',
          url: `/v1/pets/${id}`,
          headers: { ...headers(), 'content-type': 'application/merge-patch+json' },
          payload: '{"status":"sold"}',
        });
        expect(sold.statusCode).toBe(200);
      }
      return id;
    });
    expected = CREATES + CREATES / 2;
    writing = false;
    await follower;

    const ids = seen.map((event) => event.id);
    expect(new Set(ids).size, 'an event was served twice').toBe(ids.length);
    expect(seen).toHaveLength(expected);
    const createdIds = seen.filter((e) => e.type === 'pet.created').map((e) => e.data.pet.id);
    expect([...createdIds].sort((a, b) => a - b)).toEqual([...created].sort((a, b) => a - b));
    // Each pet's sale comes after its creation.
    const firstSeen = new Map<number, string>();
    for (const event of seen) {
      const pet = event.data.pet.id;
      if (event.type === 'pet.created') firstSeen.set(pet, event.type);
      else expect(firstSeen.get(pet), `pet ${pet} sold before it was created`).toBe('pet.created');
    }
    // A second reader from the start gets the same events in the same order.
    const again: string[] = [];
    let replay = '/v1/events?limit=100';
    for (;;) {
      const page = await t.request('GET', replay);
      replay = nextPage(String(page.headers.link));
      const served = page.json<PetEvent[]>();
      if (served.length === 0) break;
      again.push(...served.map((event) => event.id));
    }
    expect(again).toEqual(ids);
  }, 120_000);
});
