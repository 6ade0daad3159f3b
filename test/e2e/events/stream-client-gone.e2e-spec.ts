import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { openEventStream } from '../../support/event-stream-client.js';
import { freePort } from '../../support/free-port.js';
import { createPet } from '../../support/pets-api.js';
import { ENGINES } from '../../support/test-database.js';
import { resetStreamRequest, startHeldApp, type HeldApp } from './held-stream-app.js';

/** The default EVENT_STREAMS_PER_KEY. */
const STREAMS_PER_KEY = 5;

/**
 * docs/events.md, "The stream": a stream counts against its key's limit only while its client is
 * connected. Here the client resets its connection while the request waits on the key check or the
 * retention check (each held after it read the database), and the request goes on afterwards.
 */
describe.each(ENGINES)('a stream whose client resets while it opens [%s]', (engine) => {
  let t: HeldApp;
  let metricsUrl: string;

  beforeAll(async () => {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    t = await startHeldApp(engine, {
      RATE_LIMIT_PER_MINUTE: '0',
      METRICS_PORT: String(metricsPort),
    });
    await createPet(t, { name: 'Rex', categoryId: 1 });
  });
  afterAll(() => t?.close());

  const openStreams = async () => {
    const text = await (await fetch(metricsUrl)).text();
    return Number(/^animal_store_event_streams_open (\d+)$/m.exec(text)![1]);
  };
  const newKey = async (name: string) => (await t.app.get(ApiKeyStore).create(name)).key;
  /** On PostgreSQL an event is served once the transactions older than its own have ended. */
  const firstEventId = async () => {
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      const [first] = (await t.request('GET', '/v1/events')).json<{ id: string }[]>();
      if (first) return first.id;
    }
    throw new Error('no event served within 5 s');
  };
  async function expectAllPlacesFree(key: string): Promise<void> {
    expect(await openStreams()).toBe(0);
    const clients = [];
    try {
      for (let i = 0; i < STREAMS_PER_KEY; i++) {
        const client = await openEventStream(`${t.baseUrl}/v1/events/stream`, {
          authorization: `Bearer ${key}`,
        });
        clients.push(client);
        expect(client.status).toBe(200);
      }
    } finally {
      for (const client of clients) client.close();
    }
  }

  it.each(['during the key check', 'during the retention check'] as const)(
    `counts no stream whose client reset %s: ${STREAMS_PER_KEY} such, then ${STREAMS_PER_KEY} streams open`,
    async (stage) => {
      const key = await newKey(`reset ${stage}`);
      const resumeFrom = await firstEventId();
      for (let i = 0; i < STREAMS_PER_KEY; i++) await resetStreamRequest(t, stage, key, resumeFrom);
      await expectAllPlacesFree(key);
    },
  );
});
