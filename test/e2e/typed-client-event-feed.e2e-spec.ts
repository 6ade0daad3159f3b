import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  followEvents,
  type StoreEvent,
} from '../../examples/client/src/event-feed.js';
import {
  createAnimalStoreClient,
  createPet,
  describePet,
  type AnimalStoreClient,
  type Pet,
} from '../../examples/client/src/example.js';
import { createApp } from '../../src/app.js';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { loadConfig } from '../../src/config/app-config.js';
import { EventRetention } from '../../src/events/event-retention.js';
import { CLIENT_COMMAND } from '../support/example-commands.js';
import type { Finished } from '../support/processes.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';

/** Short, so that the tests spend little time up to date; nothing asserts on it. */
const POLL_INTERVAL_MS = 20;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The pet an event is about; undefined for an event about a category. */
const petOf = (event: StoreEvent) => ('pet' in event.data ? event.data.pet : undefined);

describe.each(ENGINES)('typed client following the event feed [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;
  let client: AnimalStoreClient;
  let dir: string;
  let cursorFile: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `${await t.app.getUrl()}/v1`;
    client = createAnimalStoreClient(baseUrl, t.key);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM pet_events');
    await t.dataSource.query('UPDATE pet_events_purged SET tx = 0, seq = 0');
    dir = await mkdtemp(join(tmpdir(), 'animal-store-feed-'));
    cursorFile = join(dir, 'events.cursor');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function createPets(names: string[]): Promise<Pet[]> {
    const pets: Pet[] = [];
    for (const name of names) pets.push(await createPet(client, { name, categoryId: 1 }));
    return pets;
  }

  const feed = (count: number) => feedOf(client, count);

  /**
   * Follows from `cursorFile` until `until` says the event just handled is the last wanted; what
   * was handled, in order.
   */
  async function followUntil(
    until: (event: StoreEvent) => boolean,
    options: { pageSize?: number; on?: AnimalStoreClient } = {},
  ): Promise<StoreEvent[]> {
    const handled: StoreEvent[] = [];
    const stop = new AbortController();
    await followEvents(options.on ?? client, {
      cursorFile,
      signal: stop.signal,
      pageSize: options.pageSize,
      pollIntervalMs: POLL_INTERVAL_MS,
      handle: (event) => {
        handled.push(event);
        if (until(event)) stop.abort();
      },
    });
    return handled;
  }

  const createdEventOf = (pet: Pet) => (event: StoreEvent) =>
    event.type === 'pet.created' && petOf(event)?.id === pet.id;
  const cursorSaved = () => readFile(cursorFile, 'utf8');

  it('stopped part-way and started again from its cursor file, sees the whole feed once, in order', async () => {
    const pets = await createPets(['a', 'b', 'c', 'd', 'e']);

    const first = await followUntil(createdEventOf(pets[2]), { pageSize: 2 });
    const savedAfterFirst = await cursorSaved();
    pets.push(...(await createPets(['f', 'g', 'h', 'i'])));
    const second = await followUntil(createdEventOf(pets[8]), { pageSize: 2 });

    expect(first.map((event) => petOf(event))).toEqual(pets.slice(0, 3));
    expect(savedAfterFirst).toBe(`${first[2].id}\n`);
    expect([...first, ...second]).toEqual(await feed(9));
    expect([...first, ...second].map((event) => [event.type, petOf(event)])).toEqual(
      pets.map((pet) => ['pet.created', pet]),
    );
    expect(await cursorSaved()).toBe(`${second.at(-1)!.id}\n`);
  });

  it('waits while up to date, then delivers the events committed meanwhile', async () => {
    // Not Promise.withResolvers: the suites also run on Node 20, which lacks it.
    let reachedTheEnd!: () => void;
    const upToDate = new Promise<void>((resolve) => (reachedTheEnd = resolve));
    const watched = createAnimalStoreClient(baseUrl, t.key);
    watched.use({
      onResponse: async ({ response }) => {
        if (((await response.clone().json()) as StoreEvent[]).length === 0) reachedTheEnd();
      },
    });
    const pets: Pet[] = [];
    const following = followUntil((event) => petOf(event)?.id === pets[2]?.id, { on: watched });

    await upToDate;
    pets.push(...(await createPets(['late 1', 'late 2', 'late 3'])));
    const handled = await following;

    expect(handled).toEqual(await feed(3));
    expect(handled.map((event) => petOf(event))).toEqual(pets);
  });

  it('when a handler throws, stops with its error and delivers that event again on the next start', async () => {
    const pets = await createPets(['a', 'b', 'c', 'd']);
    const attempted: StoreEvent[] = [];
    const failing = followEvents(client, {
      cursorFile,
      signal: new AbortController().signal,
      pollIntervalMs: POLL_INTERVAL_MS,
      handle: (event) => {
        attempted.push(event);
        if (createdEventOf(pets[2])(event)) throw new Error('the till is offline');
      },
    });

    await expect(failing).rejects.toThrow('the till is offline');
    const savedAfterFailure = await cursorSaved();
    const redelivered = await followUntil(createdEventOf(pets[3]));

    const events = await feed(4);
    expect(attempted).toEqual(events.slice(0, 3));
    expect(savedAfterFailure).toBe(`${events[1].id}\n`);
    expect(redelivered).toEqual(events.slice(2));
  });

  it('stops with CursorExpiredError, handling nothing, when retention deleted events after the saved cursor', async () => {
    await createPets(['a', 'b', 'c']);
    const events = await feed(3);
    await writeFile(cursorFile, `${events[0].id}\n`);
    await ageEvents(events[1]);
    await t.app.get(EventRetention).deleteExpiredEvents();
    const handled: StoreEvent[] = [];

    const failure = await followEvents(client, {
      cursorFile,
      signal: new AbortController().signal,
      handle: (event) => void handled.push(event),
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(CursorExpiredError);
    expect((failure as CursorExpiredError).body).toEqual({
      code: 'CURSOR_EXPIRED',
      message:
        'Events after this cursor were deleted (older than the retention period); read the feed again without after',
      status: 410,
    });
    expect((failure as CursorExpiredError).message).toBe(
      `The events after the cursor saved in ${cursorFile} were deleted (they were older than the ` +
        'feed keeps events), so following on would skip them. Resync: reconcile your copy with ' +
        `listPets (GET /v1/pets), then delete ${cursorFile} to follow from the oldest event kept.`,
    );
    expect(handled).toEqual([]);
    expect(await cursorSaved()).toBe(`${events[0].id}\n`);
  });

  /** Makes the events up to and including `last` older than the default 30 days of retention. */
  async function ageEvents(last: StoreEvent): Promise<void> {
    const old = new Date(Date.now() - 31 * DAY_MS).toISOString();
    // The id's second part is the event's seq (docs/events.md, "Order"); the test may look inside.
    const seq = Number(last.id.split('-')[1]);
    await t.dataSource.query(`UPDATE pet_events SET occurred_at = '${old}' WHERE seq <= ${seq}`);
  }

  it('refuses a cursor file that holds no event id instead of starting over', async () => {
    await writeFile(cursorFile, 'not an id!\n');

    const failure = followEvents(client, {
      cursorFile,
      signal: new AbortController().signal,
      handle: () => {},
    });

    await expect(failure).rejects.toThrow(`${cursorFile} does not hold an event id: "not an id!"`);
  });

  it('runs as `follow <cursor-file>`: prints each event, stops on SIGTERM with its place saved, and goes on from there', async () => {
    const pets = await createPets(['a', 'b', 'c']);
    const env = { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: t.key };

    const first = await runFollowUntil(env, (line) => line.endsWith(describePet(pets[1])));
    pets.push(...(await createPets(['d', 'e'])));
    const second = await runFollowUntil(env, (line) => line.endsWith(describePet(pets[4])));

    const events = await feed(5);
    expect([first, second]).toEqual([
      { code: 0, stdout: expect.any(String), stderr: '' },
      { code: 0, stdout: expect.any(String), stderr: '' },
    ]);
    expect(first.stdout + second.stdout).toBe(
      events.map((event) => `${event.id} pet.created ${describePet(petOf(event)!)}\n`).join(''),
    );
    expect(await cursorSaved()).toBe(`${events[4].id}\n`);
  });

  /** Runs `npm run client:example -- follow <cursorFile>` and sends SIGTERM once it printed a line `until` accepts. */
  function runFollowUntil(
    env: Record<string, string>,
    until: (line: string) => boolean,
  ): Promise<Finished> {
    const child = spawn('node', [...CLIENT_COMMAND, 'follow', cursorFile], {
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdout += `${line}\n`;
      if (until(line)) child.kill('SIGTERM');
    });
    return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
  }
});

describe.skipIf(!ENGINES.includes('postgres'))(
  'typed client following the event feed through a database outage [postgres]',
  () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    let proxyPort: number;
    let app: NestFastifyApplication;
    let baseUrl: string;
    let key: string;
    let dir: string;

    // The app reaches PostgreSQL through a proxy the test cuts: the database goes away, the app
    // stays up and answers 503 with Retry-After.
    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      const direct = new URL(database.url);
      proxy = new TcpProxy(Number(direct.port || 5432));
      const viaProxy = new URL(database.url);
      proxyPort = await proxy.start();
      viaProxy.port = String(proxyPort);
      app = await createApp(
        loadConfig({
          NODE_ENV: 'test',
          LOG_LEVEL: 'silent',
          DATABASE_URL: viaProxy.toString(),
          RATE_LIMIT_PER_MINUTE: '0',
        }),
      );
      await app.listen(0, '127.0.0.1');
      baseUrl = `${await app.getUrl()}/v1`;
      key = (await app.get(ApiKeyStore).create('follower')).key;
      dir = await mkdtemp(join(tmpdir(), 'animal-store-feed-'));
    });
    afterAll(async () => {
      await app?.close();
      await proxy?.cut();
      await database?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it('asks again after the Retry-After of a 503, not after its poll interval, and misses nothing', async () => {
      const client = createAnimalStoreClient(baseUrl, key);
      const pets = [await createPet(client, { name: 'a', categoryId: 1 })];
      pets.push(await createPet(client, { name: 'b', categoryId: 1 }));
      const served = await feedOf(client, 2);
      const unavailable: { retryAfter: string | null; body: unknown }[] = [];
      let cutOff!: () => void;
      const outage = new Promise<void>((resolve) => (cutOff = resolve));
      const watched = createAnimalStoreClient(baseUrl, key);
      watched.use({
        onResponse: async ({ response }) => {
          if (response.status !== 503) return;
          const body: unknown = await response.clone().json();
          unavailable.push({ retryAfter: response.headers.get('Retry-After'), body });
          cutOff();
        },
      });
      await proxy.cut();

      const handled: StoreEvent[] = [];
      const stop = new AbortController();
      const following = followEvents(watched, {
        cursorFile: join(dir, 'events.cursor'),
        signal: stop.signal,
        // Longer than the test may take: only a wait of Retry-After lets the follow go on.
        pollIntervalMs: 60 * 60 * 1000,
        handle: (event) => {
          handled.push(event);
          if (petOf(event)?.id === pets[1].id) stop.abort();
        },
      });
      await outage;
      await proxy.start(proxyPort);
      await following;

      expect(unavailable.length).toBeGreaterThan(0);
      for (const answer of unavailable)
        expect(answer).toEqual({
          retryAfter: '1',
          body: {
            code: 'SERVICE_UNAVAILABLE',
            message: 'The database is unavailable; retry later',
            status: 503,
          },
        });
      expect(handled).toEqual(served);
      expect(handled.map((event) => petOf(event))).toEqual(pets);
    });
  },
);

/**
 * The whole feed once it holds `count` events, read with plain listEvents calls, apart from the
 * follower. On PostgreSQL an event is served once every transaction that began before it has ended,
 * anywhere on the server (docs/events.md, "Order"), so a page may be empty for a moment.
 */
async function feedOf(client: AnimalStoreClient, count: number): Promise<StoreEvent[]> {
  const events: StoreEvent[] = [];
  while (events.length < count) {
    const after = events.at(-1)?.id;
    const { data, response } = await client.GET('/events', { params: { query: { after } } });
    expect(response.status).toBe(200);
    events.push(...data!);
    if (events.length < count) await pause(POLL_INTERVAL_MS);
  }
  return events;
}

function pause(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
