import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import {
  invalidValue,
  PROTOTYPE_KEYS,
  validValue,
  type OpenApiDocument,
  type Schema,
  type StringRule,
} from './openapi-arbitraries.js';

// ---------------------------------------------------------------------------------------------
// The name rule that api-decisions §4 adds to the document's 1–255 characters

export const PET_NAME_RULE: StringRule = {
  accepts: (value) => value.trim() !== '' && !value.includes('\u0000') && value.isWellFormed(),
  breaking: fc.oneof(
    fc
      .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff'), {
        minLength: 1,
        maxLength: 8,
      })
      .map((spaces) => spaces.join('')),
    fc.constantFrom('Re\u0000x', '\u0000', 'Rex\ud800', '\udc00', 'a\ud83d'),
  ),
};

// ---------------------------------------------------------------------------------------------
// JSON text, written the many ways a client may legally write it

export interface JsonStyle {
  indent: number | string | undefined;
  escapeNonAscii: boolean;
  padding: string;
}

export const jsonStyle: fc.Arbitrary<JsonStyle> = fc.record({
  indent: fc.constantFrom(undefined, undefined, 1, 2, '\t'),
  escapeNonAscii: fc.boolean(),
  padding: fc.constantFrom('', '', ' ', '\n', '\r\n', '\t '),
});

export function writeJson(value: unknown, style: JsonStyle): string {
  let text = JSON.stringify(value, null, style.indent) ?? '';
  // Non-ASCII only ever occurs inside strings, where a \u escape of each UTF-16 unit means the same.
  if (style.escapeNonAscii)
    text = text.replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  return style.padding + text + style.padding;
}

/** An object with its keys in a random order (order carries no meaning in JSON). */
export function shuffledKeys(
  object: Record<string, unknown>,
): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(object);
  // Object.fromEntries defines own properties, `__proto__` included, as JSON.parse does.
  return fc
    .shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length })
    .map((order) => Object.fromEntries(order.map((key) => [key, object[key]])));
}

// ---------------------------------------------------------------------------------------------
// Hostile request bodies: structurally wrong values, then wrong text, then wrong bytes

interface HostileBody {
  kind: string;
  bytes: Buffer;
}

/** Byte sequences that are not UTF-8: stray continuation bytes, overlongs, surrogates, 5-byte forms. */
const BAD_UTF8: number[][] = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc3],
  [0xc0, 0xaf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

/** JSON number texts at and past what a double or an int64 can carry, and non-JSON number forms. */
const NUMBER_TEXTS = fc.oneof(
  fc.constantFrom(
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '18446744073709551616',
    '1e400',
    '-1e400',
    '1e-400',
    '-0',
    '1.0',
    '1e2',
    '1E+2',
    '0.1e1',
    '00',
    '01',
    '.5',
    '1.',
    '+1',
    '0x10',
    'Infinity',
    'NaN',
    '1_000',
  ),
  fc.integer({ min: 17, max: 400 }).map((digits) => `1${'0'.repeat(digits)}`),
);

function nested(depth: number, open: string, close: string, leaf: string): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

/** Deep arrays or objects, both under and far over the service's nesting limit. */
const DEEP_VALUE = fc
  .tuple(fc.integer({ min: 1, max: 4000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? nested(depth, '[', ']', '1') : nested(depth, '{"a":', '}', '1'),
  );

/** Replaces the value text of `field` in a JSON object text, or adds the field when absent. */
function withFieldText(text: string, field: string, valueText: string): string {
  const object = text.trim();
  const body = object.slice(1, -1).trim();
  return `{${JSON.stringify(field)}:${valueText}${body ? `,${body}` : ''}}`;
}

/** Inserts `bytes` at a position inside the first string literal (or anywhere when none). */
function insertBytes(text: string, bytes: readonly number[], at: number): Buffer {
  const raw = Buffer.from(text);
  const quote = raw.indexOf(0x22);
  const position =
    quote >= 0 && at % 2 === 0 ? quote + 1 : Math.min(Math.floor(at / 2), raw.length);
  return Buffer.concat([raw.subarray(0, position), Buffer.from(bytes), raw.subarray(position)]);
}

/**
 * Bodies for createPet that a client should never get a 201 for, except where the mutation
 * happens to keep the body valid (a duplicate key whose last value is fine, say): the oracle
 * decides from the bytes, not from the kind.
 */
export function hostileBody(
  doc: OpenApiDocument,
  newPet: Schema,
  stringRule: StringRule,
  bodyLimit: number,
): fc.Arbitrary<HostileBody> {
  const validText = fc
    .tuple(validValue(doc, newPet, stringRule), jsonStyle)
    .map(([value, style]) => writeJson(value, style));
  const fields = Object.keys(doc.resolve(newPet).properties ?? {});
  const anyField = fc.oneof(
    fc.constantFrom(...fields),
    fc.constantFrom(...PROTOTYPE_KEYS),
    fc.string({ maxLength: 6 }),
  );
  const text = (kind: string, arbitrary: fc.Arbitrary<string>) =>
    arbitrary.map((body) => ({ kind, bytes: Buffer.from(body) }));

  return fc.oneof(
    text(
      'invalid value',
      fc
        .tuple(invalidValue(doc, newPet, stringRule), jsonStyle)
        .map(([value, style]) => writeJson(value, style)),
    ),
    text(
      'duplicate key',
      fc
        .tuple(validText, anyField, fc.jsonValue({ maxDepth: 1 }))
        .map(([body, field, value]) => withFieldText(body, field, JSON.stringify(value))),
    ),
    text(
      'prototype key',
      fc
        .tuple(validText, fc.constantFrom(...PROTOTYPE_KEYS), fc.jsonValue({ maxDepth: 2 }))
        .map(([body, key, value]) => withFieldText(body, key, JSON.stringify(value))),
    ),
    text(
      'deep nesting',
      fc
        .tuple(validText, anyField, DEEP_VALUE)
        .map(([body, field, deep]) => withFieldText(body, field, deep)),
    ),
    text(
      'deep body',
      fc.integer({ min: 2, max: 5000 }).map((depth) => nested(depth, '{"name":', '}', '"x"')),
    ),
    text(
      'huge number',
      fc
        .tuple(validText, NUMBER_TEXTS)
        .map(([body, number]) => withFieldText(body, 'categoryId', number)),
    ),
    text(
      'long string',
      fc
        .tuple(
          validText,
          fc.constantFrom(...fields, 'x'),
          fc.integer({ min: 200, max: bodyLimit * 2 }),
          fc.constantFrom('x', 'é', '🐕', '\\u0041', '\\"'),
        )
        .map(([body, field, length, unit]) =>
          withFieldText(body, field, `"${unit.repeat(Math.ceil(length / unit.length))}"`),
        ),
    ),
    fc
      .tuple(validText, fc.constantFrom(...BAD_UTF8), fc.nat())
      .map(([body, bytes, at]) => ({ kind: 'bad UTF-8', bytes: insertBytes(body, bytes, at) })),
    fc.tuple(validText, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([body, at, byte]) => {
      const bytes = Buffer.from(body);
      bytes[at % bytes.length] = byte;
      return { kind: 'byte flipped', bytes };
    }),
    text(
      'truncated',
      fc.tuple(validText, fc.nat()).map(([body, at]) => body.slice(0, at % body.length)),
    ),
    text(
      'not JSON',
      fc.oneof(
        fc.constantFrom(
          '',
          ' ',
          '{',
          '}',
          '{}',
          '[]',
          'null',
          '\ufeff{"name":"Rex","categoryId":1}',
          "{'name':'Rex','categoryId':1}",
          '{name:"Rex",categoryId:1}',
          '{"name":"Rex","categoryId":1,}',
          '{"name":"Rex","categoryId":1}x',
          '{"name":"Rex","categoryId":1}{}',
          '{"name":"Rex" /* c */,"categoryId":1}',
          'name=Rex&categoryId=1',
          '{"name":"Rex\u0001","categoryId":1}',
        ),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
    ),
  );
}

/** What createPet must answer for these body bytes, sent as JSON with a valid key. */
export type CreateOutcome =
  | { status: 201; pet: Record<string, unknown> }
  | { status: 400; code: 'MALFORMED_JSON' | 'VALIDATION_FAILED'; offending: string[] }
  | { status: 413 };

/**
 * The oracle for a createPet body: JSON text must be UTF-8 (RFC 8259 §8.1) and parse; the value
 * must satisfy NewPet (closed) and the name rule. `offending` are the fields a 400 must name.
 */
export function expectedCreate(
  bytes: Buffer,
  bodyLimit: number,
  problemsOf: (value: unknown) => string[],
): CreateOutcome {
  if (bytes.length > bodyLimit) return { status: 413 };
  if (bytes.length === 0) return { status: 400, code: 'VALIDATION_FAILED', offending: [] };
  if (!isUtf8(bytes)) return { status: 400, code: 'MALFORMED_JSON', offending: [] };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { status: 400, code: 'MALFORMED_JSON', offending: [] };
  }
  const problems = problemsOf(value);
  if (problems.length > 0)
    return { status: 400, code: 'VALIDATION_FAILED', offending: problems.filter(Boolean) };
  return { status: 201, pet: value as Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------
// Headers

/** Content types Fastify must hand to the JSON parser: application/json, any case, any parameters. */
export const JSON_CONTENT_TYPES = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'Application/JSON',
  'APPLICATION/JSON; CHARSET=UTF-8',
  'application/json ; charset=utf-8',
  'application/json; charset="utf-8"',
  'application/json; foo=bar',
);

const TOKEN = fc.string({
  unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+.^_`|~-"),
  minLength: 1,
  maxLength: 12,
});

/** Well-formed media types that are not JSON, or only look like it. */
export const OTHER_MEDIA_TYPES = fc.oneof(
  fc.constantFrom(
    'text/plain',
    'text/json',
    'application/jsonp',
    'application/json-patch+json',
    'application/problem+json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'application/*',
    '*/*',
    'application/jsonx',
  ),
  fc
    .tuple(TOKEN, TOKEN)
    .map(([type, subtype]) => `${type}/${subtype}`)
    .filter((type) => type !== 'application/json'),
);

/** Content-Type values that are not media types at all (no `type/subtype`). */
export const NOT_MEDIA_TYPES = fc.oneof(
  fc.constantFrom('', 'json', 'applicationjson', 'application/json, text/plain', 'application/'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).filter((type) => !type.includes('/')),
);

/** Content codings a JSON body might be labelled with; only identity means "as it is". */
export const CONTENT_ENCODINGS = fc.constantFrom(
  'gzip',
  'deflate',
  'br',
  'compress',
  'zstd',
  'x-gzip',
  'gzip, identity',
  'bogus',
);

/**
 * Authorization header values and whether each carries `key` validly: scheme `Bearer` in any case,
 * one space, the key exactly (RFC 6750 via passport-http-bearer).
 */
export function authorizations(key: string): fc.Arbitrary<{ value?: string; valid: boolean }> {
  const prefix = key.slice(0, 'pets_'.length + 12);
  const valid = fc
    .constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR')
    .map((scheme) => ({ value: `${scheme} ${key}`, valid: true }));
  const invalid = fc
    .oneof(
      fc.constantFrom(
        undefined,
        '',
        'Bearer',
        'Bearer ',
        `Bearer  ${key}`,
        `Bearer\t${key}`,
        `Basic ${key}`,
        `Token ${key}`,
        key,
        `Bearer ${key}x`,
        `Bearer ${key.slice(0, -1)}`,
        `Bearer ${key.toUpperCase()}`,
        `Bearer ${prefix}_${'A'.repeat(43)}`,
        `Bearer pets_000000000000_${'A'.repeat(43)}`,
        `Bearer ${key}, Bearer ${key}`,
        `Bearer ${key} ${key}`,
        `Bearer ${'x'.repeat(8000)}`,
        "Bearer ' OR 1=1 --",
        'Bearer pets_%00_x',
      ),
      fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((token) => `Bearer ${token}`),
      fc
        .tuple(fc.nat(key.length - 1), fc.constantFrom('A', 'z', '0', '_', '-'))
        .map(([at, c]) => `Bearer ${key.slice(0, at)}${c}${key.slice(at + 1)}`)
        .filter((value) => value !== `Bearer ${key}`),
    )
    .map((value) => ({ value, valid: false }));
  return fc.oneof({ arbitrary: valid, weight: 1 }, { arbitrary: invalid, weight: 3 });
}

// ---------------------------------------------------------------------------------------------
// Raw requests for a real socket: what Fastify inject cannot express

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
  const paths = doc
    .routes()
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
