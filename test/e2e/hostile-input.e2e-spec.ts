import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppConfig } from '../../src/config/app-config.js';
import { MAX_JSON_DEPTH } from '../../src/http/request-body.js';
import {
  AnswerChecks,
  expectNamesFields,
  type Answer,
  type SentRequest,
} from '../support/answer-checks.js';
import {
  authorizations,
  CONTENT_ENCODINGS,
  expectedCreate,
  hostileBody,
  JSON_CONTENT_TYPES,
  jsonStyle,
  NOT_MEDIA_TYPES,
  OTHER_MEDIA_TYPES,
  PET_NAME_RULE,
  rawRequests,
  shuffledKeys,
  writeJson,
  type CreateOutcome,
} from '../support/hostile-requests.js';
import {
  invalidParameterText,
  OpenApiDocument,
  parameterConforms,
  serializeParameter,
  unknownFieldName,
  validValue,
  violations,
  type Parameter,
} from '../support/openapi-arbitraries.js';
import { startDevServer, type DevServer, type ServerProcess } from '../support/processes.js';
import { exchange, parseResponses } from '../support/raw-http.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES, type Engine } from '../support/test-database.js';

/**
 * Property-based hostile input, derived from the committed OpenAPI document: valid requests
 * generated from its schemas must succeed as documented, and mutated ones (wrong types, unknown
 * and prototype keys, deep nesting, huge numbers, long strings, bad UTF-8, duplicate keys, odd
 * content types, encodings, keys, query strings, ids, methods, raw bytes) must be refused with
 * the Error body, never a 5xx, never storing anything, never leaking anything.
 *
 * FC_SEED=<n> replays a run (the seed is printed at the start); FC_RUNS=<factor> scales every
 * property's run count (1 by default: over 10,000 requests; 0.1 for a quick look, 10 for a soak).
 */
const SEED = process.env.FC_SEED
  ? Number(process.env.FC_SEED)
  : Math.floor(Math.random() * 2 ** 31);
const SCALE = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 1;
if (!(SCALE > 0)) throw new Error(`FC_RUNS must be a positive number, got ${process.env.FC_RUNS}`);
console.log(
  `hostile-input: fast-check seed ${SEED}, run scale ${SCALE}; replay with FC_SEED=${SEED} FC_RUNS=${SCALE}`,
);

/** The bulk runs on SQLite; PostgreSQL gets a share, enough to catch engine differences. */
const ENGINE_SHARE: Record<Engine, number> = { sqlite: 1, postgres: 0.15 };
const ENV = { RATE_LIMIT_PER_MINUTE: '0' };

const doc = OpenApiDocument.load();
const listPets = doc.operation('listPets');
const createPet = doc.operation('createPet');
const getPet = doc.operation('getPet');
const newPet = createPet.requestBody!;

let requestsSent = 0;
const requestsByProperty = new Map<string, number>();

function assertProperty<T>(
  name: string,
  engine: Engine,
  baseRuns: number,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const before = requestsSent;
  const numRuns = Math.max(1, Math.round(baseRuns * SCALE * ENGINE_SHARE[engine]));
  return fc
    .assert(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns })
    .finally(() => requestsByProperty.set(`${name} [${engine}]`, requestsSent - before));
}

/** The fields a 400 for this value must name; a body nested too deep is refused as a whole. */
function problemsOf(value: unknown): string[] {
  if (nestingDepth(value) > MAX_JSON_DEPTH) return [''];
  return violations(doc, newPet, value, PET_NAME_RULE);
}

function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0 && deepest <= MAX_JSON_DEPTH) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

function ownKeys(bytes: Buffer): string[] {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null ? Object.keys(value) : [];
  } catch {
    return [];
  }
}

function decodedPath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

function percentEncoded(text: string, everyByte: boolean): string {
  if (!everyByte) return encodeURIComponent(text);
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

describe.each(ENGINES)('hostile input through the real app [%s]', (engine) => {
  let t: TestApp;
  let checks: AnswerChecks;
  let bodyLimit: number;
  /** Cursors from Link headers, with the id of the last pet of the page each came from. */
  const cursors = new Map<string, number>();

  beforeAll(async () => {
    t = await startTestApp(engine, ENV);
    checks = new AnswerChecks(doc, t.key);
    bodyLimit = t.app.get(AppConfig).bodyLimitBytes;
  });
  afterAll(() => t?.close());

  async function send(
    method: string,
    url: string,
    request: { headers?: Record<string, string | undefined>; payload?: Buffer | string } = {},
    sent: Omit<SentRequest, 'method'> = {},
  ): Promise<Answer> {
    requestsSent++;
    const headers = Object.fromEntries(
      Object.entries(request.headers ?? {}).filter(([, value]) => value !== undefined),
    ) as Record<string, string>;
    const response = await t.app.inject({
      method: method as 'GET',
      url,
      headers,
      payload: request.payload,
    });
    const answer: Answer = {
      status: response.statusCode,
      headers: Object.fromEntries(
        Object.entries(response.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value : value === undefined ? undefined : String(value),
        ]),
      ),
      body: response.body,
    };
    checks.check({ method, ...sent }, answer);
    return answer;
  }

  const bearer = () => `Bearer ${t.key}`;
  const petCount = async () =>
    Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM pets'))[0].n);
  const storedPet = async (id: number) => {
    const [row] = await t.dataSource.query(
      `SELECT name, category_id AS "categoryId", status FROM pets WHERE id = ${Number(id)}`,
    );
    if (!row) return undefined;
    const { name, categoryId, status } = row as Record<string, unknown>;
    return { name, categoryId: Number(categoryId), ...(status !== null && { status }) };
  };
  const existingId = async (index: number) => {
    const rows = await t.dataSource.query(
      `SELECT id FROM pets ORDER BY id LIMIT 1 OFFSET ${index % Math.max(1, await petCount())}`,
    );
    return rows.length ? Number(rows[0].id) : 1;
  };

  /** Sends a createPet and holds the answer and the store to what the oracle expects. */
  async function expectCreate(
    request: { headers: Record<string, string | undefined>; payload: Buffer | string },
    expected: CreateOutcome | { status: 401 | 415 },
  ): Promise<void> {
    const countBefore = await petCount();
    const payload = Buffer.from(request.payload);
    const response = await send('POST', createPet.path, request, {
      operation: createPet,
      echoable: ownKeys(payload),
    });
    expect(response.status, response.body).toBe(expected.status);
    const stored = (await petCount()) - countBefore;
    if (expected.status !== 201) {
      expect(stored, 'a refused createPet stored a pet').toBe(0);
      if (expected.status === 400) {
        expect(JSON.parse(response.body).code).toBe(expected.code);
        if (expected.code === 'VALIDATION_FAILED')
          expectNamesFields(JSON.parse(response.body).message, expected.offending);
      }
      return;
    }
    expect(stored).toBe(1);
    const pet = JSON.parse(response.body) as Record<string, unknown>;
    expect(pet).toEqual({ ...expected.pet, id: pet.id });
    expect(await storedPet(pet.id as number)).toEqual(expected.pet);
  }

  describe('bugs the generators found, kept as plain examples', () => {
    const CATEGORY_ID = 'categoryId must be a JSON integer from 1 to 9007199254740991';
    const notUtf8 = Buffer.concat([
      Buffer.from('{"name":"Re'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('x","categoryId":1}'),
    ]);
    it.each([
      // Nest's ValidationPipe deleted the key before the whitelist saw it, and the pet was stored.
      [
        'a "prototype" field',
        {},
        '{"name":"Rex","categoryId":1,"prototype":{}}',
        400,
        'VALIDATION_FAILED',
        'prototype is not a known field',
      ],
      // Decoded leniently, so the name was stored with U+FFFD in place of the bytes.
      [
        'bytes that are not UTF-8',
        {},
        notUtf8,
        400,
        'MALFORMED_JSON',
        'Request body is not valid UTF-8',
      ],
      // The coding was ignored and the bytes read as if they were not compressed.
      [
        'Content-Encoding: gzip',
        { 'content-encoding': 'gzip' },
        '{"name":"Rex","categoryId":1}',
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'Content-Encoding is not supported: send the body uncompressed',
      ],
      // Only the first key that exists on Object.prototype was named, nothing else.
      [
        'prototype keys beside other wrong fields',
        {},
        '{"toString":1,"valueOf":2,"categoryId":"1"}',
        400,
        'VALIDATION_FAILED',
        `toString is not a known field; valueOf is not a known field; name is required; ${CATEGORY_ID}`,
      ],
      // The name vanished: " is not a known field".
      [
        'an empty field name',
        {},
        '{"":1,"name":"Rex","categoryId":1}',
        400,
        'VALIDATION_FAILED',
        '"" is not a known field',
      ],
      [
        'a field name with surrounding spaces',
        {},
        '{" name ":1,"name":"Rex","categoryId":1}',
        400,
        'VALIDATION_FAILED',
        '" name " is not a known field',
      ],
    ])(
      'createPet refuses %s, stores nothing',
      async (_case, headers, payload, status, code, message) => {
        const countBefore = await petCount();
        const answer = await send('POST', createPet.path, {
          headers: { authorization: bearer(), 'content-type': 'application/json', ...headers },
          payload,
        });

        expect(answer.status).toBe(status);
        expect(JSON.parse(answer.body)).toEqual({ code, message, status });
        if (status === 415) expect(answer.headers['accept-encoding']).toBe('identity');
        expect(await petCount()).toBe(countBefore);
      },
    );

    it('listPets names every key that exists on Object.prototype, and the other problems', async () => {
      const answer = await send('GET', `${listPets.path}?toString=1&constructor=2&limit=0`, {
        headers: { authorization: bearer() },
      });

      expect(JSON.parse(answer.body)).toEqual({
        code: 'VALIDATION_FAILED',
        message:
          'toString is not a known field; constructor is not a known field; limit must be a decimal integer from 1 to 100',
        status: 400,
      });
    });

    // Fastify refused a Content-Type that is not a media type with a 415 before anything else.
    it.each([
      [
        'no key',
        401,
        undefined,
        '{"name":"Rex","categoryId":1}',
        'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
      ],
      [
        'a valid key',
        415,
        'valid',
        '{"name":"Rex","categoryId":1}',
        'Content-Type must be application/json',
      ],
      [
        'a valid key and no body',
        400,
        'valid',
        '',
        'request body is required: expected a JSON object',
      ],
    ])(
      'treats a Content-Type that is not a media type as none: with %s, %i',
      async (_case, status, key, payload, message) => {
        const answer = await send('POST', createPet.path, {
          headers: { 'content-type': 'not a media type', authorization: key && bearer() },
          payload,
        });

        expect(answer.status).toBe(status);
        expect(JSON.parse(answer.body).message).toBe(message);
      },
    );
  });

  it('createPet: every NewPet the schema allows is stored exactly and answered 201, however it is written', async () => {
    const request = fc.record({
      pet: (validValue(doc, newPet, PET_NAME_RULE) as fc.Arbitrary<Record<string, unknown>>).chain(
        shuffledKeys,
      ),
      style: jsonStyle,
      contentType: JSON_CONTENT_TYPES,
      scheme: fc.constantFrom('Bearer', 'bearer', 'BEARER'),
    });
    await assertProperty('createPet valid', engine, 1500, request, async (r) => {
      const payload = writeJson(r.pet, r.style);
      await expectCreate(
        {
          headers: { authorization: `${r.scheme} ${t.key}`, 'content-type': r.contentType },
          payload,
        },
        expectedCreate(Buffer.from(payload), bodyLimit, problemsOf),
      );
    });
  });

  it('createPet: hostile bodies get exactly the answer the oracle gives, and a refusal stores nothing', async () => {
    const body = hostileBody(doc, newPet, PET_NAME_RULE, bodyLimit);
    await assertProperty('createPet hostile body', engine, 3000, body, async ({ bytes }) => {
      await expectCreate(
        {
          headers: { authorization: bearer(), 'content-type': 'application/json' },
          payload: bytes,
        },
        expectedCreate(bytes, bodyLimit, problemsOf),
      );
    });
  });

  it('createPet: the size limit, then the key, then the content type and coding decide before the body does', async () => {
    const request = fc.record({
      body: fc.oneof(
        fc
          .tuple(validValue(doc, newPet, PET_NAME_RULE), jsonStyle)
          .map(([pet, style]) => Buffer.from(writeJson(pet, style))),
        hostileBody(doc, newPet, PET_NAME_RULE, bodyLimit).map(({ bytes }) => bytes),
      ),
      contentType: fc.oneof(
        JSON_CONTENT_TYPES.map((value) => ({ value, kind: 'json' as const })),
        OTHER_MEDIA_TYPES.map((value) => ({ value, kind: 'other' as const })),
        NOT_MEDIA_TYPES.map((value) => ({ value, kind: 'none' as const })),
        fc.constant({ value: undefined, kind: 'none' as const }),
      ),
      encoding: fc.option(fc.oneof(CONTENT_ENCODINGS, fc.constantFrom('identity', 'IDENTITY'))),
      authorization: authorizations(t.key),
    });
    await assertProperty('createPet headers', engine, 1500, request, async (r) => {
      await expectCreate(
        {
          headers: {
            authorization: r.authorization.value,
            'content-type': r.contentType.value,
            'content-encoding': r.encoding ?? undefined,
          },
          payload: r.body,
        },
        expectedWithHeaders(r.body, r.contentType.kind, r.encoding, r.authorization.valid),
      );
    });
  });

  /**
   * A body over the limit is refused while it is read, before the key is looked at, but only the
   * JSON parser reads bodies. Then the key. Then a declared type that is not JSON is a 415, body or
   * not; a Content-Type that is no media type at all counts as none. An empty body with no type
   * (or JSON) is reported missing, whatever its coding; a body with no type is a 415.
   */
  function expectedWithHeaders(
    body: Buffer,
    contentType: 'json' | 'other' | 'none',
    encoding: string | null,
    validKey: boolean,
  ): CreateOutcome | { status: 401 | 415 } {
    if (contentType === 'json' && body.length > bodyLimit) return { status: 413 };
    if (!validKey) return { status: 401 };
    if (contentType === 'other') return { status: 415 };
    if (body.length === 0) return expectedCreate(body, bodyLimit, problemsOf);
    if (contentType === 'none') return { status: 415 };
    if (encoding !== null && encoding.toLowerCase() !== 'identity') return { status: 415 };
    return expectedCreate(body, bodyLimit, problemsOf);
  }

  const queryParameters = listPets.parameters.filter((p) => p.in === 'query');
  const queryNames = queryParameters.map((p) => p.name);
  /** `cursor` is opaque: the only valid values are those the service handed out in Link headers. */
  const isOpaque = (p: Parameter) => p.name === 'cursor';

  type QueryPair = { name: string; value: string } | { name: string; cursorIndex: number };

  const validPair = (p: Parameter): fc.Arbitrary<QueryPair> =>
    isOpaque(p)
      ? fc.nat().map((cursorIndex) => ({ name: p.name, cursorIndex }))
      : validValue(doc, p.schema).map((value) => ({
          name: p.name,
          value: serializeParameter(value),
        }));

  function resolvePairs(pairs: QueryPair[]): { name: string; value: string }[] {
    const known = [...cursors.keys()];
    return pairs.flatMap((pair) => {
      if ('value' in pair) return [pair];
      return known.length
        ? [{ name: pair.name, value: known[pair.cursorIndex % known.length] }]
        : [];
    });
  }

  function queryString(pairs: { name: string; value: string }[], everyByte: boolean): string {
    return pairs
      .map(
        ({ name, value }) =>
          `${percentEncoded(name, everyByte)}=${percentEncoded(value, everyByte)}`,
      )
      .join('&');
  }

  /** Query parameters that break the document: unknown, repeated, or with a value it does not allow. */
  function offendingParameters(pairs: { name: string; value: string }[]): string[] {
    const offending = new Set<string>();
    for (const { name, value } of pairs) {
      const parameter = queryParameters.find((p) => p.name === name);
      const repeated = pairs.filter((pair) => pair.name === name).length > 1;
      const valid = parameter
        ? isOpaque(parameter)
          ? cursors.has(value)
          : parameterConforms(doc, parameter.schema, value)
        : false;
      if (repeated || !valid) offending.add(name);
    }
    return [...offending];
  }

  /** Holds a 200 page to the document and the README: Pets, at most `limit`, filtered, in id order, linked. */
  function expectPage(answer: Answer, pairs: { name: string; value: string }[]): void {
    const given = Object.fromEntries(pairs.map(({ name, value }) => [name, value]));
    const limitDefault = queryParameters.find((p) => p.name === 'limit')!.schema.default as number;
    const limit = given.limit === undefined ? limitDefault : Number(given.limit);
    const pets = JSON.parse(answer.body) as { id: number; status?: string }[];
    expect(pets.length).toBeLessThanOrEqual(limit);
    const ids = pets.map((pet) => pet.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    if (given.status) expect(pets.every((pet) => pet.status === given.status)).toBe(true);
    if (given.cursor) expect(ids.every((id) => id > cursors.get(given.cursor)!)).toBe(true);
    const link = answer.headers.link as string | undefined;
    if (link === undefined) return;
    expect(pets).toHaveLength(limit);
    const next = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1], 'http://x');
    expect(next.pathname).toBe(listPets.path);
    expect(next.searchParams.get('limit')).toBe(String(limit));
    expect(next.searchParams.get('status')).toBe(given.status ?? null);
    cursors.set(next.searchParams.get('cursor')!, ids.at(-1)!);
  }

  it('listPets: every query the document allows is answered 200 with a page as documented', async () => {
    const query = fc.record({
      pairs: fc
        .tuple(...queryParameters.map((p) => fc.option(validPair(p), { nil: undefined })))
        .map((pairs) => pairs.filter((pair) => pair !== undefined))
        .chain((pairs) => fc.shuffledSubarray(pairs, { minLength: pairs.length })),
      everyByte: fc.boolean(),
    });
    await assertProperty('listPets valid', engine, 1000, query, async ({ pairs, everyByte }) => {
      const resolved = resolvePairs(pairs);
      const answer = await send(
        'GET',
        `${listPets.path}?${queryString(resolved, everyByte)}`,
        {
          headers: { authorization: bearer() },
        },
        { operation: listPets },
      );
      expect(answer.status, answer.body).toBe(200);
      expectPage(answer, resolved);
    });
  });

  it('listPets: hostile query strings are refused with a 400 naming every offending parameter', async () => {
    const pair: fc.Arbitrary<QueryPair> = fc.oneof(
      fc.constantFrom(...queryParameters).chain(validPair),
      fc
        .constantFrom(...queryParameters)
        .chain((p) =>
          (isOpaque(p) ? fc.string({ maxLength: 40 }) : invalidParameterText(doc, p.schema)).map(
            (value) => ({ name: p.name, value }),
          ),
        ),
      fc
        .tuple(unknownFieldName(queryNames), fc.string({ maxLength: 8 }))
        .map(([name, value]) => ({ name, value })),
    );
    const query = fc.record({
      pairs: fc.array(pair, { minLength: 1, maxLength: 5 }),
      everyByte: fc.boolean(),
    });
    await assertProperty(
      'listPets hostile query',
      engine,
      2000,
      query,
      async ({ pairs, everyByte }) => {
        const resolved = resolvePairs(pairs);
        const offending = offendingParameters(resolved);
        const answer = await send(
          'GET',
          `${listPets.path}?${queryString(resolved, everyByte)}`,
          { headers: { authorization: bearer() } },
          { operation: listPets, echoable: resolved.map(({ name }) => name) },
        );
        if (offending.length === 0) {
          expect(answer.status, answer.body).toBe(200);
          return expectPage(answer, resolved);
        }
        expect(answer.status, answer.body).toBe(400);
        const { code, message } = JSON.parse(answer.body);
        expect(code).toBe('VALIDATION_FAILED');
        expectNamesFields(message, offending);
      },
    );
  });

  it('getPet: an id the schema allows is 200 or 404; anything else is a 400', async () => {
    const petId = getPet.parameters.find((p) => p.in === 'path')!;
    const id = fc.oneof(
      validValue(doc, petId.schema).map((value) => ({ text: serializeParameter(value) })),
      fc.nat().map((index) => ({ existing: index })),
      invalidParameterText(doc, petId.schema).map((text) => ({ text })),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map((text) => ({ text })),
    );
    // Dot segments are resolved by URL parsing before any routing, as a browser would.
    const request = fc.record({
      id: id.filter((i) => !('text' in i) || (i.text !== '' && i.text !== '.' && i.text !== '..')),
      everyByte: fc.boolean(),
    });
    await assertProperty('getPet', engine, 1500, request, async ({ id, everyByte }) => {
      const text = 'text' in id ? id.text : String(await existingId(id.existing));
      const segment = percentEncoded(text, everyByte);
      const answer = await send(
        'GET',
        getPet.path.replace(`{${petId.name}}`, segment),
        { headers: { authorization: bearer() } },
        { operation: segment.length <= 256 ? getPet : undefined },
      );
      if (!parameterConforms(doc, petId.schema, text)) {
        expect(answer.status, answer.body).toBe(400);
        return;
      }
      const stored = await storedPet(Number(text));
      expect(answer.status, answer.body).toBe(stored ? 200 : 404);
      expect(answer.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      if (stored) expect(JSON.parse(answer.body)).toEqual({ ...stored, id: Number(text) });
    });
  });

  it('any method on any path with any headers: documented methods are served, others are 404 or 405 with Allow', async () => {
    const routes = doc.routes();
    const request = fc.record({
      method: fc.constantFrom(
        'GET',
        'HEAD',
        'POST',
        'PUT',
        'PATCH',
        'DELETE',
        'OPTIONS',
        'TRACE',
        'SEARCH',
      ),
      path: fc.oneof(
        fc
          .constantFrom(...routes.map(({ path }) => path))
          .chain((path) => fc.nat(200).map((id) => path.replace(/\{[^}]+\}/g, String(id + 1)))),
        fc.webPath().map((path) => (path.startsWith('/') ? path : `/${path}`)),
        fc.constantFrom(
          '/',
          '/v1',
          '/v1/',
          '/v2/pets',
          '/V1/PETS',
          '/v1/pets/',
          '/health/live',
          '/docs-json',
        ),
      ),
      headers: fc.dictionary(
        fc.constantFrom(
          'accept',
          'accept-encoding',
          'accept-language',
          'cookie',
          'origin',
          'range',
          'if-none-match',
          'x-forwarded-for',
          'x-forwarded-host',
          'x-forwarded-proto',
          'x-http-method-override',
          'x-request-id',
          'idempotency-key',
          'prefer',
          'content-type',
          'content-encoding',
        ),
        fc.string({ unit: 'grapheme-ascii', maxLength: 140 }),
        { maxKeys: 4 },
      ),
      withKey: fc.boolean(),
    });
    await assertProperty('any route', engine, 1000, request, async (r) => {
      const route = routes.find(({ path }) =>
        new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(decodedPath(r.path)),
      );
      const served = route?.methods.includes(r.method === 'HEAD' ? 'GET' : r.method);
      const operation = served
        ? [listPets, createPet, getPet].find(
            (op) =>
              op.path === route!.path && op.method === (r.method === 'HEAD' ? 'GET' : r.method),
          )
        : undefined;
      const countBefore = await petCount();
      const answer = await send(
        r.method,
        r.path,
        { headers: { ...r.headers, ...(r.withKey && { authorization: bearer() }) } },
        { operation: r.method === 'HEAD' ? undefined : operation },
      );
      if (route && !served) {
        expect(answer.status).toBe(405);
        for (const method of route.methods)
          expect(String(answer.headers.allow).split(', ')).toContain(method);
      }
      if (!route && !r.path.startsWith('/docs') && !r.path.startsWith('/health'))
        expect(answer.status).toBe(404);
      const xRequestId = r.headers['x-request-id'];
      if (xRequestId !== undefined && /^[\w.:-]{1,128}$/.test(xRequestId))
        expect(answer.headers['x-request-id']).toBe(xRequestId);
      expect(await petCount()).toBe(countBefore + (answer.status === 201 ? 1 : 0));
    });
  });
});

describe('hostile bytes on a real socket (node dist/server.mjs) [sqlite]', () => {
  let dev: DevServer;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    dev = await startDevServer({ ...ENV });
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
        requestsSent++;
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

describe('the hostile run as a whole', () => {
  it(`sent at least ${Math.round(10_000 * SCALE)} generated requests`, () => {
    console.log(
      `hostile-input: ${requestsSent} requests (seed ${SEED})\n` +
        [...requestsByProperty].map(([name, count]) => `  ${name}: ${count}`).join('\n'),
    );
    expect(requestsSent).toBeGreaterThanOrEqual(Math.round(10_000 * SCALE));
  });
});
