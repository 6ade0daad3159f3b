import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerChecks } from '../../support/answer-checks.js';
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

describe('hostile bytes on a real socket (node dist/server.mjs) [sqlite]', () => {
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

describe('the hostile raw-socket run as a whole', () => {
  const floor = requestFloor(1000);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
