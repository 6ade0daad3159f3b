import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from '../support/answer-checks.js';
import { startDevServer, type DevServer, type ServerProcess } from '../support/processes.js';
import { exchange, parseResponses } from '../support/raw-http.js';

/**
 * Slow, oversized and odd clients against the real process (node dist/main.js), on real
 * sockets: what Fastify inject cannot express. After each test the server must still answer.
 */
describe('slow, oversized and odd clients on a real socket [sqlite]', () => {
  let dev: DevServer;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    dev = await startDevServer({ RATE_LIMIT_PER_MINUTE: '0' });
    ({ server, key } = dev);
  });
  afterAll(() => dev?.stop());
  afterEach(async () => {
    const live = await fetch(`${server.baseUrl}/health/live`);
    expect(live.status).toBe(200);
  });

  const auth = () => `Authorization: Bearer ${key}\r\n`;

  /** Sends one request as raw bytes and returns the one answer it gets. */
  async function rawAnswer(request: string): Promise<Answer> {
    const answers = parseResponses(await exchange(server.baseUrl, request));
    expect(answers).toHaveLength(1);
    return answers[0];
  }

  function expectError(answer: Answer, status: number, code: string, message: string): void {
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    expect(JSON.parse(answer.body)).toEqual({ code, message, status });
  }

  describe('clients that stall', () => {
    /** Opens a connection, writes `bytes`, and reports when the server closes it, with what it sent. */
    function stallingClient(bytes: string): { socket: Socket; closed: Promise<string> } {
      const { hostname, port } = new URL(server.baseUrl);
      const socket = connect(Number(port), hostname, () => socket.write(bytes));
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => {});
      const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
      return { socket, closed };
    }

    it('disconnects clients that stall in their body, their headers or before a byte, while others get answers meanwhile', async () => {
      const stalled = [
        // Headers complete, 9 of the 100 promised body bytes, then nothing.
        stallingClient(
          `POST /v1/pets HTTP/1.1\r\nHost: h\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"`,
        ),
        // Half a header line, then nothing (slowloris).
        stallingClient('GET /v1/pets HTTP/1.1\r\nHost: h\r\nX-Slow: '),
        // Connected, never a byte.
        stallingClient(''),
      ];
      let open = stalled.length;
      for (const { closed } of stalled) void closed.then(() => open--);

      const answeredMeanwhile: number[] = [];
      while (open > 0) {
        const response = await fetch(`${server.baseUrl}/v1/pets`, {
          headers: { authorization: `Bearer ${key}` },
        });
        answeredMeanwhile.push(response.status);
        await new Promise((resolve) => setTimeout(resolve, 250));
        expect(answeredMeanwhile.length, 'stalled clients were never disconnected').toBeLessThan(
          200,
        );
      }

      // The server cut them without a word: a client that stopped sending gets no answer.
      expect(await Promise.all(stalled.map(({ closed }) => closed))).toEqual(['', '', '']);
      expect(answeredMeanwhile.length).toBeGreaterThan(3);
      expect(answeredMeanwhile.every((status) => status === 200)).toBe(true);
      // Nothing was stored from the half-sent createPet.
      const pets = await fetch(`${server.baseUrl}/v1/pets`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(await pets.json()).toEqual([]);
    }, 60_000);
  });

  describe('oversized requests', () => {
    // Node's limit on the request line and headers together is 16 KiB. The service answers 400,
    // not 431: no error code has that status (docs/api-design.md, "Errors"), and a 400 with the
    // Error body says what is wrong.
    it.each([
      [
        'one header line over the limit',
        `GET /v1/pets HTTP/1.1\r\nHost: h\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ],
      [
        'many small headers over the limit together',
        `GET /v1/pets HTTP/1.1\r\nHost: h\r\n${Array.from({ length: 2_000 }, (_, i) => `X-H${i}: 12345\r\n`).join('')}\r\n`,
      ],
      [
        'a request line over the limit',
        `GET /v1/pets?cursor=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: h\r\n\r\n`,
      ],
    ])('answers %s with 400 and the Error body, then closes', async (_case, request) => {
      const answer = await rawAnswer(request);

      expectError(answer, 400, 'VALIDATION_FAILED', 'Request headers are too large');
      expect(answer.headers.connection).toBe('close');
    });
  });

  describe('odd request lines and headers', () => {
    it('answers an HTTP/1.1 request without Host with 400 and the Error body', async () => {
      const answer = await rawAnswer(`GET /v1/pets HTTP/1.1\r\n${auth()}\r\n`);

      expectError(answer, 400, 'VALIDATION_FAILED', 'A request must have exactly one Host header');
    });

    it.each(['1.1', '1.0'])(
      'answers an HTTP/%s request with two Host headers with 400 and the Error body',
      async (version) => {
        const answer = await rawAnswer(
          `GET /v1/pets HTTP/${version}\r\nHost: a\r\nHost: b\r\n${auth()}\r\n`,
        );

        expectError(
          answer,
          400,
          'VALIDATION_FAILED',
          'A request must have exactly one Host header',
        );
      },
    );

    it('serves an HTTP/1.0 request without Host, which that version allows', async () => {
      const answer = await rawAnswer(`GET /v1/pets HTTP/1.0\r\n${auth()}\r\n`);

      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual([]);
    });

    it('serves an absolute-form target like its path (RFC 9112 §3.2.2)', async () => {
      const answer = await rawAnswer(
        `GET http://h/v1/pets?limit=5 HTTP/1.1\r\nHost: h\r\n${auth()}Connection: close\r\n\r\n`,
      );

      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual([]);
    });

    it.each([
      ['DELETE http://h/v1/pets', 'GET, HEAD, POST'],
      ['PUT HTTP://H:80/v1/pets/1', 'DELETE, GET, HEAD, PATCH'],
      ['DELETE /v1/pet%73', 'GET, HEAD, POST'],
    ])('answers %s with 405 and Allow: %s, as for its plain path', async (target, allow) => {
      const answer = await rawAnswer(
        `${target} HTTP/1.1\r\nHost: h\r\n${auth()}Connection: close\r\n\r\n`,
      );

      const method = target.split(' ', 1)[0];
      expectError(
        answer,
        405,
        'METHOD_NOT_ALLOWED',
        `Method ${method} is not allowed here; use ${allow}`,
      );
      expect(answer.headers.allow).toBe(allow);
    });

    it('names an empty query parameter name as "" in its 400', async () => {
      const answer = await rawAnswer(
        `GET /v1/pets?=x HTTP/1.1\r\nHost: h\r\n${auth()}Connection: close\r\n\r\n`,
      );

      expectError(answer, 400, 'VALIDATION_FAILED', '"" is not a known field');
    });

    it('serves a request whose Expect is not 100-continue, instead of a bare 417', async () => {
      const answer = await rawAnswer(
        `GET /v1/pets HTTP/1.1\r\nHost: h\r\n${auth()}Expect: something-else\r\nConnection: close\r\n\r\n`,
      );

      expect(answer.status).toBe(200);
    });

    it('answers CONNECT with 400 and the Error body instead of dropping the connection', async () => {
      const answer = await rawAnswer('CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n');

      expectError(
        answer,
        400,
        'VALIDATION_FAILED',
        'CONNECT is not supported: this server is not a proxy',
      );
      expect(answer.headers.connection).toBe('close');
    });
  });
});
