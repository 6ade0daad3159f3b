import { setImmediate } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdOf } from '../../../src/events/event-position.js';
import { openEventStream } from '../../support/event-stream-client.js';
import { createPet } from '../../support/pets-api.js';
import { ENGINES } from '../../support/test-database.js';
import { startHeldApp, type HeldApp } from './held-stream-app.js';

/**
 * docs/events.md, "The stream": a resumed stream catches up with its own queries, then the
 * fan-out takes over. Here the stream's last catch-up page is held after it read the database,
 * while an event commits and the fan-out reads it and moves on: the race that, left to chance,
 * strikes a couple of times in ten thousand resumptions under concurrent writes.
 */
describe.each(ENGINES)('the hand-over from catch-up to the fan-out [%s]', (engine) => {
  let t: HeldApp;

  beforeAll(async () => {
    // Its own instance: the stream below is its first, so its page is the first read after the tail.
    t = await startHeldApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());

  const feedIds = async () =>
    (await t.request('GET', '/v1/events?limit=100')).json<{ id: string }[]>().map((e) => e.id);

  it('sends an event the fan-out read while the last catch-up page was on its way, exactly once', async () => {
    for (let i = 0; i < 3; i++) await createPet(t, { name: `before ${i}`, categoryId: 1 });
    const resumeFrom = (await feedIds()).at(-1)!;
    const page = t.repository.pages.holdNext((after) => eventIdOf(after) === resumeFrom);

    const client = await openEventStream(`${t.baseUrl}/v1/events/stream`, {
      authorization: `Bearer ${t.key}`,
      'last-event-id': resumeFrom,
    });
    try {
      expect(client.status).toBe(200);
      // The page has found nothing after resumeFrom, and waits to be handed back.
      await page.reached;
      const fannedOut = t.repository.pagesRead.next((_after, read) =>
        read.some((event) => event.pet.includes('"during the page"')),
      );
      const during = await createPet(t, { name: 'during the page', categoryId: 1 });
      const duringId = (await feedIds()).at(-1)!;
      await fannedOut;
      // The fan-out has read it: its sends and its new tail follow within this turn.
      await setImmediate();
      page.release();

      const after = await createPet(t, { name: 'after the page', categoryId: 1 });
      const afterId = (await feedIds()).at(-1)!;
      await client.until(afterId);
      expect(client.ids()).toEqual([duringId, afterId]);
      const pets = client.messages
        .filter((message) => message.id !== undefined)
        .map((message) => (JSON.parse(message.data!) as { data: { pet: object } }).data.pet);
      expect(pets).toEqual([during, after]);
    } finally {
      client.close();
    }
  });
});
