import fc from 'fast-check';
import { BAD_UTF8 } from './hostile-bodies.js';
import type { OpenApiDocument } from './openapi-arbitraries.js';

/**
 * Whole requests as bytes, for a real socket: what Fastify inject cannot express (broken request
 * lines, header lines and framing).
 */

export interface RawRequest {
  method: string;
  bytes: Buffer;
  /**
   * Whether it asks to switch protocols (Upgrade and Connection: upgrade). Node does not treat
   * the end of input inside such a request as a parse error: when the client stops mid-request,
   * it is dropped without an answer, as any client that stops sending is.
   */
  asksToUpgrade: boolean;
}

const CRLF = '\r\n';

/** Bytes no request line or header may carry, or that are not UTF-8. */
const HOSTILE_BYTES = fc.oneof(
  fc.constantFrom(...BAD_UTF8),
  fc.constantFrom([0x00], [0x01], [0x0b], [0x1f], [0x7f], [0x20], [0x0d], [0x0a], [0x09]),
  fc.constantFrom(
    ...['#', '%', '%zz', '%00', '%E0%A4%A', '\\', '"', '<', '{', '`', '..'].map((s) => [
      ...Buffer.from(s),
    ]),
  ),
);

function spliced(text: string, bytes: readonly number[], at: number): Buffer {
  const raw = Buffer.from(text);
  const position = at % (raw.length + 1);
  return Buffer.concat([raw.subarray(0, position), Buffer.from(bytes), raw.subarray(position)]);
}

/** Request targets: the documented paths, spoilt with raw bytes, in absolute and other forms. */
function requestTargets(doc: OpenApiDocument): fc.Arbitrary<Buffer> {
  // The event stream stays open by design; its hostile input is in hostile-input/events.e2e-spec.ts.
  const paths = doc
    .routes()
    .filter(({ path }) => !path.endsWith('/events/stream'))
    .map(({ path }) => path.replace(/\{[^}]+\}/g, '1'))
    .concat(['/v1/pets?limit=5&status=sold', '/v1/pets?=x', '/health/live', '/v1/nothing']);
  const path = fc.constantFrom(...paths);
  return fc.oneof(
    { weight: 3, arbitrary: path.map((p) => Buffer.from(p)) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(path, HOSTILE_BYTES, fc.nat())
        .map(([p, bytes, at]) => spliced(p, bytes, 1 + (at % p.length))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'http://h',
            'HTTP://H:80',
            'https://h',
            'http://u:p@h',
            'ftp://h',
            'http://',
          ),
          path,
        )
        .map(([origin, p]) => Buffer.from(origin + p)),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '*',
          'h:443',
          '',
          '//v1/pets',
          '/'.repeat(50),
          'http://h',
          `/v1/pets/${'9'.repeat(20_000)}`,
        )
        .map((t) => Buffer.from(t)),
    },
  );
}

/** Header lines, one per entry, many of them broken in ways only a socket can carry. */
function hostileHeaderLines(): fc.Arbitrary<Buffer[]> {
  const line = fc.oneof(
    fc.constantFrom(
      'X-A: \u0000',
      'X-A: a\rb',
      'NoColon',
      ' Leading: space',
      'Bad Name: x',
      'X-A : x',
      'X-A: folded\r\n continued',
      ': no name',
      'Content-Length: -1',
      'Content-Length: abc',
      'Content-Length: 99999999999999999999',
      'Content-Length: 1, 2',
      'Transfer-Encoding: chunked',
      'Transfer-Encoding: gzip',
      'Transfer-Encoding: gzip, chunked',
      'Transfer-Encoding: identity',
      'Expect: 100-continue',
      'Expect: something-else',
      'Upgrade: websocket',
      'Upgrade: h2c',
      'Connection: keep-alive',
      'Connection: upgrade, close',
      'Content-Type: application/json',
      'Content-Type: text/plain',
      'Content-Encoding: gzip',
      `X-Big: ${'a'.repeat(20_000)}`,
      'X-Forwarded-Host: evil.example',
      'X-HTTP-Method-Override: DELETE',
    ),
    fc
      .tuple(
        fc.constantFrom(
          'X-Request-Id',
          'Accept',
          'Authorization',
          'Content-Type',
          'Host',
          'X-Custom',
        ),
        fc.string({ unit: 'grapheme-ascii', maxLength: 20 }),
        HOSTILE_BYTES,
        fc.nat(),
      )
      .map(([name, value, bytes, at]) =>
        Buffer.concat([Buffer.from(`${name}: `), spliced(value, bytes, at)]),
      ),
  );
  return fc.array(
    line.map((l) => (typeof l === 'string' ? Buffer.from(l, 'latin1') : l)),
    { maxLength: 3 },
  );
}

/** A body and how it is framed: right, wrong, or not at all. */
interface FramedBody {
  headers: string[];
  body: Buffer;
}

function framedBody(validJson: fc.Arbitrary<string>): fc.Arbitrary<FramedBody> {
  const content = fc.oneof(
    validJson.map((text) => Buffer.from(text)),
    fc
      .tuple(validJson, fc.constantFrom(...BAD_UTF8), fc.nat())
      .map(([text, bytes, at]) => spliced(text, bytes, at)),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  );
  const framing = fc.constantFrom('length', 'length', 'length', 'chunked', 'short', 'long', 'none');
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<FramedBody>({ headers: [], body: Buffer.alloc(0) }) },
    {
      weight: 3,
      arbitrary: fc.tuple(content, framing).map(([body, how]): FramedBody => {
        const json = 'Content-Type: application/json';
        switch (how) {
          case 'chunked':
            return {
              headers: [json, 'Transfer-Encoding: chunked'],
              body: Buffer.concat([
                Buffer.from(`${body.length.toString(16)}\r\n`),
                body,
                Buffer.from('\r\n0\r\n\r\n'),
              ]),
            };
          case 'short':
            return { headers: [json, `Content-Length: ${Math.max(0, body.length - 3)}`], body };
          case 'long':
            return { headers: [json, `Content-Length: ${body.length + 10}`], body };
          case 'none':
            return { headers: [json], body };
          default:
            return { headers: [json, `Content-Length: ${body.length}`], body };
        }
      }),
    },
  );
}

/**
 * Whole requests as bytes: a request line (method, target, version), Host and Authorization
 * present or not, hostile header lines, and a body framed right or wrong.
 */
export function rawRequests(
  doc: OpenApiDocument,
  key: string,
  validJson: fc.Arbitrary<string>,
): fc.Arbitrary<RawRequest> {
  const method = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'TRACE',
        'CONNECT',
        'get',
        'FOO',
        'PRI',
        'PROPFIND',
        'G\u0000T',
        'X'.repeat(100),
      ),
    },
  );
  const version = fc.oneof(
    { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'HTTP/1.0',
        'HTTP/2.0',
        'HTTP/1.2',
        'HTTP/0.9',
        'HTTP/1',
        'http/1.1',
        'HTTPS/1.1',
        '',
        'HTTP/1.1 x',
      ),
    },
  );
  const host = fc.oneof(
    { weight: 6, arbitrary: fc.constant(['Host: h']) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        [],
        ['Host: a', 'Host: b'],
        ['Host:'],
        ['Host: a b'],
        ['Host: h:99999'],
      ),
    },
  );
  const authorization = fc.oneof(
    { weight: 3, arbitrary: fc.constant([`Authorization: Bearer ${key}`]) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        [],
        ['Authorization: Bearer \u00ff\u00fe'],
        [`Authorization: Bearer ${key}`, 'Authorization: Bearer x'],
      ),
    },
  );
  const eol = fc.oneof(
    { weight: 9, arbitrary: fc.constant(CRLF) },
    { weight: 1, arbitrary: fc.constant('\n') },
  );
  return fc
    .record({
      method,
      target: requestTargets(doc),
      version,
      host,
      authorization,
      extra: hostileHeaderLines(),
      framed: framedBody(validJson),
      eol,
    })
    .map(({ method, target, version, host, authorization, extra, framed, eol }) => {
      const head = [
        Buffer.concat([
          Buffer.from(`${method} `),
          target,
          Buffer.from(version ? ` ${version}` : ''),
        ]),
        ...[...host, ...authorization, ...framed.headers, 'Connection: close'].map((l) =>
          Buffer.from(l, 'latin1'),
        ),
        ...extra,
      ];
      const lines = head.flatMap((l) => [l, Buffer.from(eol)]);
      const text = extra.map((l) => l.toString('latin1'));
      return {
        method,
        bytes: Buffer.concat([...lines, Buffer.from(eol), framed.body]),
        asksToUpgrade:
          text.some((l) => /^upgrade:/i.test(l)) &&
          text.some((l) => /^connection:.*upgrade/i.test(l)),
      };
    });
}
