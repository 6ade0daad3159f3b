import fc from 'fast-check';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerChecks } from '../../support/answer-checks.js';
import { openEventStream } from '../../support/event-stream-client.js';
import { freePort } from '../../support/free-port.js';
import { forgedEventId } from '../../support/hostile-event-ids.js';
import { jsonStyle, PET_NAME_RULE, writeJson } from '../../support/hostile-bodies.js';
import { rawRequests } from '../../support/hostile-raw-requests.js';
import {
  assertProperty,
  countRequest,
  expectRequestsSent,
  HOSTILE_ENV,
  requestFloor,
} from '../../support/hostile-run.js';
import { OpenApiDocument, validValue } from '../../support/openapi-arbitraries.js';
import { startDevServer, type DevServer, type ServerProcess } from '../../support/processes.js';
import { exchange, parseResponses } from '../../support/raw-http.js';

/**
 * Hostile bytes on a real socket, to the built server process: broken request lines, methods,
 * versions, Host and Authorization headers, header lines and body framing, which Fastify inject
 * cannot express. Every answer is the Error body or a success, never a 5xx, and the server logs
 * no error and never the key. Seed and run scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const newPet = doc.operation('createPet').requestBody!;

describe('hostile bytes on a real socket (node dist/main.js) [sqlite]', () => {
  let dev: DevServer;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    dev = await startDevServer({ ...HOSTILE_ENV });
    ({ server, key } = dev);
  });
  afterAll(() => dev?.stop());

  it('answers every malformed request line, header and body with the Error body, or a success, never a 5xx', async () => {
    const checks = new AnswerChecks(doc, key);
    const validJson = fc
      .tuple(validValue(doc, newPet, PET_NAME_RULE), jsonStyle)
      .map(([pet, style]) => writeJson(pet, style));
    await assertProperty(
      'raw socket',
      'sqlite',
      1000,
      rawRequests(doc, key, validJson),
      async (r) => {
        countRequest();
        const raw = await exchange(server.baseUrl, r.bytes);
        const answers = parseResponses(raw, r.method === 'HEAD');
        if (!r.asksToUpgrade)
          expect(answers.length, 'the server closed without answering').toBeGreaterThan(0);
        for (const [index, answer] of answers.entries())
          checks.check({ method: index === 0 ? r.method : 'GET' }, answer);
      },
    );

    expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200);
    const afterStart = server.output().slice(server.output().indexOf('Server listening'));
    expect(afterStart).not.toContain(key);
    expect(afterStart).not.toMatch(/"level":"(error|fatal)"/);
  });
});

/** The default EVENT_STREAMS_PER_KEY. */
const STREAMS_PER_KEY = 5;

/**
 * Event ids and stream requests on a real socket, to a built server holding more than a page of
 * events: a forged id is a 400 within its deadline and the process goes on answering (the deadline
 * fails a server that spins instead of hanging this suite), and a connection reset anywhere in a
 * stream's request or right after it opened leaves no stream counted.
 */
describe('event ids and reset streams on a real socket (node dist/main.js) [sqlite]', () => {
  let dev: DevServer;
  let server: ServerProcess;
  let key: string;
  let metricsUrl: string;
  let ids: string[];

  beforeAll(async () => {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    dev = await startDevServer({ ...HOSTILE_ENV, METRICS_PORT: String(metricsPort) });
    ({ server, key } = dev);
    for (let i = 0; i < 150; i++) {
      const created = await fetch(`${server.baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `p${i}`, categoryId: 1 }),
      });
      expect(created.status).toBe(201);
    }
    const page = await fetch(`${server.baseUrl}/v1/events?limit=100`, {
      headers: { authorization: `Bearer ${key}` },
    });
    ids = ((await page.json()) as { id: string }[]).map((event) => event.id);
  });
  afterAll(() => dev?.stop());

  const openStreams = async () => {
    const text = await (await fetch(metricsUrl)).text();
    return Number(/^animal_store_event_streams_open (\d+)$/m.exec(text)![1]);
  };
  const live = async () =>
    (await fetch(`${server.baseUrl}/health/live`, { signal: AbortSignal.timeout(5_000) })).status;

  it('answers every forged event id with a 400, on the feed, after and Last-Event-ID, and goes on answering', async () => {
    const checks = new AnswerChecks(doc, key);
    await assertProperty('forged ids', 'sqlite', 100, forgedEventId('sqlite', ids), async (id) => {
      const auth = `Authorization: Bearer ${key}\r\n`;
      const cursor = encodeURIComponent(id);
      for (const [request, field] of [
        [`GET /v1/events?after=${cursor} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 'after'],
        [`GET /v1/events/stream?after=${cursor} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 'after'],
        [
          `GET /v1/events/stream HTTP/1.1\r\nHost: x\r\n${auth}Last-Event-ID: ${id}\r\n\r\n`,
          'Last-Event-ID',
        ],
      ]) {
        countRequest();
        const [answer] = parseResponses(await exchange(server.baseUrl, request));
        checks.check({ method: 'GET' }, answer);
        expect(answer.status, `${field} ${id}`).toBe(400);
        expect(JSON.parse(answer.body)).toEqual({
          code: 'VALIDATION_FAILED',
          message: `${field} must be the id of an event from this feed`,
          status: 400,
        });
      }
      expect(await live()).toBe(200);
    });
  });

  it(`counts no stream whose connection was reset amid its request or once it opened: then ${STREAMS_PER_KEY} open`, async () => {
    const head = `GET /v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    const resetAt = fc.oneof(
      fc.integer({ min: 1, max: head.length }),
      fc.constant('connected' as const),
    );
    const { port } = new URL(server.baseUrl);
    const run = fc.array(resetAt, { minLength: STREAMS_PER_KEY, maxLength: 2 * STREAMS_PER_KEY });
    await assertProperty('stream resets', 'sqlite', 20, run, async (resets) => {
      for (const at of resets) {
        countRequest();
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {});
        await new Promise((resolve) => socket.once('connect', resolve));
        const opened = new Promise<void>((resolve) => {
          let received = '';
          socket.on('data', (chunk: Buffer) => {
            received += chunk.toString('latin1');
            if (received.includes(': connected\n\n')) resolve();
          });
        });
        socket.write(at === 'connected' ? head : head.slice(0, at));
        if (at === 'connected') await opened;
        socket.resetAndDestroy();
      }
      // The server hears of the resets in its own time.
      for (const deadline = Date.now() + 5_000; (await openStreams()) > 0;)
        if (Date.now() > deadline)
          throw new Error(`streams still counted after ${resets.join(', ')}`);
      const clients = [];
      try {
        for (let i = 0; i < STREAMS_PER_KEY; i++) {
          countRequest();
          clients.push(
            await openEventStream(`${server.baseUrl}/v1/events/stream`, {
              authorization: `Bearer ${key}`,
            }),
          );
          expect(clients.at(-1)!.status, resets.join(', ')).toBe(200);
        }
      } finally {
        for (const client of clients) client.close();
      }
      for (const deadline = Date.now() + 5_000; (await openStreams()) > 0;)
        if (Date.now() > deadline) throw new Error('closed streams still counted after 5 s');
    });
    expect(await live()).toBe(200);
    const afterStart = server.output().slice(server.output().indexOf('Server listening'));
    expect(afterStart).not.toContain(key);
    expect(afterStart).not.toMatch(/"level":"(error|fatal)"/);
  });
});

describe('the hostile raw-socket run as a whole', () => {
  const floor = requestFloor(1000 + 3 * 100 + STREAMS_PER_KEY * 20);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
