import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/processes.js';
import { exchange, parseResponses } from '../../support/raw-http.js';
import {
  asJson,
  auth,
  meaningfulHeaders,
  send,
  startParityPair,
  type ParityCase,
  type ParityPair,
  type Received,
} from '../../support/reference-parity.js';

/**
 * What is not one operation: unknown paths and methods, the Host header, request targets in
 * absolute form, request ids, what only a raw socket can send, and the reference process itself
 * (its log lines, its stop on SIGTERM).
 */
describe('bench reference answers routing and transport as the service does [sqlite]', () => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair();
  });
  afterAll(() => pair?.stop());

  describe('unknown routes, methods, Host headers and request ids', () => {
    // Run in this order; the expected status keeps each case meaning what it says.
    const cases: ParityCase[] = [
      ['unknown path', 404, 'GET', '/v1/nothing', { headers: auth }],
      ['trailing slash', 404, 'GET', '/v1/pets/', { headers: auth }],
      ['path below a pet', 404, 'GET', '/v1/pets/1/owner', {}],
      [
        'DELETE a pet that is not there',
        404,
        'DELETE',
        '/v1/pets/9007199254740991',
        { headers: auth },
      ],
      ['OPTIONS a pet', 405, 'OPTIONS', '/v1/pets/1', { headers: auth }],
      ['PUT a pet, no key', 405, 'PUT', '/v1/pets/1', {}],
      ['PATCH the collection', 405, 'PATCH', '/v1/pets', { headers: auth }],
      ['OPTIONS the collection', 405, 'OPTIONS', '/v1/pets', {}],
      ['POST a health probe', 405, 'POST', '/health/live', {}],
      ['liveness', 200, 'GET', '/health/live', {}],
      ['no Host header', 400, 'GET', '/v1/pets', { headers: auth, setHost: false }],
      [
        'no Host header on getPet: its deprecation headers too',
        400,
        'GET',
        '/v1/pets/1',
        { headers: auth, setHost: false },
      ],
      [
        'no Host header before the body is read',
        400,
        'POST',
        '/v1/pets',
        { headers: asJson, body: 'x'.repeat(16_385), setHost: false },
      ],
      ['no Host header on an unknown path', 400, 'GET', '/v1/nothing', { setHost: false }],
      [
        'two Host headers',
        400,
        'GET',
        '/v1/pets',
        { headers: { ...auth, host: ['localhost', 'localhost'] } },
      ],
      [
        'an unknown path with a Content-Type that is no media type',
        404,
        'POST',
        '/v1/nothing',
        { headers: { 'content-type': 'nonsense' }, body: '{}' },
      ],
      [
        'PUT a pet with a Content-Type that is no media type',
        405,
        'PUT',
        '/v1/pets/1',
        { headers: { 'content-type': 'nonsense' }, body: '{}' },
      ],
      ['DELETE the collection, percent-encoded', 405, 'DELETE', '/v1/%70ets', {}],
      ['DELETE the collection with a fragment', 405, 'DELETE', '/v1/pets#top', {}],
      ['PUT a pet in absolute form', 405, 'PUT', 'http://localhost/v1/pets/1?x=1', {}],
      ['DELETE, absolute form, scheme in capitals', 405, 'DELETE', 'HTTP://localhost/v1/pets', {}],
      ['DELETE the root in absolute form', 404, 'DELETE', 'http://localhost', {}],
      ['PUT a pet id holding an encoded slash', 405, 'PUT', '/v1/pets/a%2Fb', {}],
      ['list in absolute form', 200, 'GET', 'http://localhost/v1/pets?limit=1', { headers: auth }],
      [
        'a generated request id',
        200,
        'GET',
        '/v1/pets?limit=1',
        { headers: auth, requestId: null },
      ],
      [
        'an insane request id is replaced',
        200,
        'GET',
        '/v1/pets?limit=1',
        { headers: { ...auth, 'x-request-id': 'has space' }, requestId: null },
      ],
    ];

    it.each(cases.map((c, i) => [i + 1, ...c] as const))(
      '%i. %s: %i for %s %s',
      async (n, ...parityCase) => {
        await pair.expectSameAnswer(parityCase, `parity-routing-${n}`);
      },
    );
  });

  describe('raw sockets', () => {
    // What Node's client cannot send: the same bytes to both on a raw connection, read until the
    // server closes it. [case, statuses the service must answer, bytes]
    const rawCases: [string, number[], string][] = [
      [
        'CONNECT is refused with the Error body',
        [400],
        'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n',
      ],
      ['HTTP/1.0 needs no Host header', [200], 'GET /health/live HTTP/1.0\r\n\r\n'],
      [
        'a request without Host ends its keep-alive connection',
        [200, 400],
        'GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n' +
          'GET /health/live HTTP/1.1\r\n\r\n' +
          'GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n',
      ],
      ['an unparsable header line', [400], 'GET /health/live HTTP/1.1\r\nHost a\r\n\r\n'],
    ];

    it.each(rawCases)('raw: %s', async (_case, statuses, bytes) => {
      const fromService = parseResponses(await exchange(pair.service.baseUrl, bytes));
      const fromReference = parseResponses(await exchange(pair.reference.baseUrl, bytes));

      expect(fromService.map(({ status }) => status)).toEqual(statuses);
      // Connection counts here: these requests leave keep-alive to the server.
      const meaning = ({ status, body, headers }: Received) => ({
        status,
        body,
        headers: { ...meaningfulHeaders(headers), connection: headers.connection },
      });
      expect(fromReference.map(meaning)).toEqual(fromService.map(meaning));
    });
  });

  // Last: the SIGTERM test stops the reference.
  describe('the reference process', () => {
    it('logs one JSON line per request, with the service fields and never a key', async () => {
      const { reference, key } = pair;
      await send(reference.baseUrl, {
        method: 'GET',
        path: '/v1/pets?limit=1',
        headers: pair.withKeys({ ...auth, 'x-request-id': 'parity-log' }),
      });
      await waitFor(() => reference.stdout().includes('parity-log'));

      const lines = reference
        .stdout()
        .trim()
        .split('\n')
        .filter((line) => line.includes('parity-log'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toEqual({
        level: 'info',
        time: expect.any(String),
        requestId: 'parity-log',
        method: 'GET',
        route: '/v1/pets',
        status: 200,
        durationMs: expect.any(Number),
        msg: 'request',
      });
      expect(reference.stdout()).not.toContain(key);
      expect(reference.stdout().toLowerCase()).not.toContain('authorization');
    });

    it('stops on SIGTERM with exit code 0, its last log line written', async () => {
      const { reference } = pair;
      await send(reference.baseUrl, {
        method: 'GET',
        path: '/health/live',
        headers: { 'x-request-id': 'parity-last' },
      });
      reference.child.kill('SIGTERM');

      expect(await reference.exited).toBe(0);
      expect(reference.stdout()).toContain('"requestId":"parity-last"');
    });
  });
});
