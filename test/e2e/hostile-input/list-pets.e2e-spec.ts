import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNamesFields, type Answer } from '../../support/answer-checks.js';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { percentEncoded } from '../../support/hostile-urls.js';
import {
  invalidParameterText,
  OpenApiDocument,
  parameterConforms,
  serializeParameter,
  unknownFieldName,
  validValue,
  type Parameter,
} from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to listPets (GET /v1/pets), derived from the committed OpenAPI document: every
 * query it allows is answered with a page as documented (at most `limit` pets, filtered, in id
 * order, linked to the next); unknown, repeated and malformed parameters and cursors are refused
 * with a 400 naming each of them, never a 5xx, never leaking anything. Seed and run scale: see
 * test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const listPets = doc.operation('listPets');

describe.each(ENGINES)('hostile input to listPets through the real app [%s]', (engine) => {
  let app: HostileApp;
  /** Cursors from Link headers, with the id of the last pet of the page each came from. */
  const cursors = new Map<string, number>();

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    // Enough pets for many pages, so Link headers and the cursors in them get exercised.
    await app.seedPets(500);
  });
  afterAll(() => app?.close());

  describe('bugs the generators found, kept as plain examples', () => {
    it('listPets names every key that exists on Object.prototype, and the other problems', async () => {
      const answer = await app.send('GET', `${listPets.path}?toString=1&constructor=2&limit=0`, {
        headers: { authorization: app.bearer() },
      });

      expect(JSON.parse(answer.body)).toEqual({
        code: 'VALIDATION_FAILED',
        message:
          'toString is not a known field; constructor is not a known field; limit must be a decimal integer from 1 to 100',
        status: 400,
      });
    });
  });

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
      const answer = await app.send(
        'GET',
        `${listPets.path}?${queryString(resolved, everyByte)}`,
        {
          headers: { authorization: app.bearer() },
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
        const answer = await app.send(
          'GET',
          `${listPets.path}?${queryString(resolved, everyByte)}`,
          { headers: { authorization: app.bearer() } },
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
});

describe('the hostile listPets run as a whole', () => {
  const floor = requestFloor(1000 + 2000);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
