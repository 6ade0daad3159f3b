import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { hostileBody, PET_NAME_RULE } from '../../support/hostile-bodies.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { percentEncoded } from '../../support/hostile-urls.js';
import {
  invalidParameterText,
  OpenApiDocument,
  parameterConforms,
  serializeParameter,
  unknownFieldName,
  validValue,
} from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to the catalogue's operations (putCategory, getCategory, listCategories,
 * deleteCategory, deletePet, getInventory), derived from the committed OpenAPI document: mutated
 * bodies, path ids, queries and If-Match headers are answered as documented, never with a 5xx,
 * and a refused request changes nothing. Seed and run scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const putCategory = doc.operation('putCategory');
const deleteCategory = doc.operation('deleteCategory');
const deletePet = doc.operation('deletePet');
const categoryId = putCategory.parameters.find((p) => p.in === 'path')!;
const petId = deletePet.parameters.find((p) => p.in === 'path')!;

/** A path id: one the schema allows, a small one likely to exist, or any text at all. */
const pathId = (schema: typeof categoryId.schema) =>
  fc.oneof(
    validValue(doc, schema).map((value) => serializeParameter(value)),
    fc.integer({ min: 1, max: 40 }).map(String),
    invalidParameterText(doc, schema),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
  );

/** If-Match as clients send it, and as they should not: absent, tags, `*`, garbage. */
const ifMatch = fc.oneof(
  fc.constant(undefined),
  fc.constant('*'),
  fc
    .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 4 }))
    .map(([id, revision]) => `"${id}-${revision}"`),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
);

const usable = (text: string) => text !== '' && text !== '.' && text !== '..';

describe.each(ENGINES)('hostile input to the catalogue through the real app [%s]', (engine) => {
  let app: HostileApp;

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    await app.seedPets(60);
    for (let id = 1; id <= 20; id++)
      await app.t.request('PUT', `/v1/categories/${id}`, { body: { name: `Category ${id}` } });
  });
  afterAll(() => app?.close());

  const categories = () =>
    app.t.dataSource.query('SELECT id, name, revision FROM categories ORDER BY id');

  it('putCategory: mutated bodies, ids and If-Match are answered as documented; a refusal changes nothing', async () => {
    const body = hostileBody(doc, putCategory.requestBody!, PET_NAME_RULE, app.bodyLimit);
    const request = fc.record({
      id: pathId(categoryId.schema).filter(usable),
      everyByte: fc.boolean(),
      body,
      ifMatch,
    });
    await assertProperty('putCategory', engine, 400, request, async (r) => {
      const before = await categories();
      const segment = percentEncoded(r.id, r.everyByte);
      const answer = await app.send(
        'PUT',
        putCategory.path.replace('{categoryId}', segment),
        {
          headers: {
            authorization: app.bearer(),
            'content-type': 'application/json',
            'if-match': r.ifMatch,
          },
          payload: r.body.bytes,
        },
        { operation: segment.length <= 256 ? putCategory : undefined },
      );
      expect([200, 201, 400, 409, 412, 413], answer.body).toContain(answer.status);
      // The size limit answers first, before the path is read.
      if (!parameterConforms(doc, categoryId.schema, r.id) && answer.status !== 413)
        expect(answer.status).toBe(400);
      if (answer.status >= 300) expect(await categories()).toEqual(before);
      else expect(JSON.parse(answer.body).id).toBe(Number(r.id));
    });
  });

  it('deleteCategory and deletePet: hostile ids and If-Match are 204, 400, 404 or 412; a refusal deletes nothing', async () => {
    const request = fc.record({
      operation: fc.constantFrom(deleteCategory, deletePet),
      id: pathId(petId.schema).filter(usable),
      everyByte: fc.boolean(),
      ifMatch,
    });
    await assertProperty('delete', engine, 400, request, async (r) => {
      const before = [await categories(), await app.petCount()];
      const name = r.operation === deletePet ? 'petId' : 'categoryId';
      const segment = percentEncoded(r.id, r.everyByte);
      const answer = await app.send(
        'DELETE',
        r.operation.path.replace(`{${name}}`, segment),
        { headers: { authorization: app.bearer(), 'if-match': r.ifMatch } },
        { operation: segment.length <= 256 ? r.operation : undefined },
      );
      expect([204, 400, 404, 412], answer.body).toContain(answer.status);
      if (!parameterConforms(doc, petId.schema, r.id)) expect(answer.status).toBe(400);
      if (answer.status !== 204) expect([await categories(), await app.petCount()]).toEqual(before);
    });
  });

  it('getCategory, listCategories and getInventory: hostile ids and queries are 200, 400 or 404, and change nothing', async () => {
    const value = fc.oneof(
      fc.integer({ min: -2, max: 120 }).map(String),
      fc.string({ unit: 'grapheme-ascii', maxLength: 12 }),
      fc.constantFrom('', '01', '1.5', '1e2', '9007199254740992', 'YWZ0ZXI6NQ'),
    );
    const name = fc.oneof(
      fc.constantFrom('limit', 'cursor', 'categoryId', 'status'),
      unknownFieldName(['limit', 'cursor', 'categoryId']),
    );
    const query = fc
      .array(fc.tuple(name, value), { maxLength: 4 })
      .map((pairs) => pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`));
    const request = fc.oneof(
      fc.record({ path: fc.constantFrom('/v1/categories', '/v1/inventory'), query }),
      pathId(categoryId.schema)
        .filter(usable)
        .map((id) => ({ path: `/v1/categories/${encodeURIComponent(id)}`, query: [] })),
    );
    await assertProperty('catalogue reads', engine, 400, request, async (r) => {
      const before = await categories();
      const url = r.query.length ? `${r.path}?${r.query.join('&')}` : r.path;
      const operation =
        r.path === '/v1/categories'
          ? doc.operation('listCategories')
          : r.path === '/v1/inventory'
            ? doc.operation('getInventory')
            : doc.operation('getCategory');
      const answer = await app.send(
        'GET',
        url,
        { headers: { authorization: app.bearer() } },
        { operation: url.length <= 256 ? operation : undefined },
      );
      expect([200, 400, 404], answer.body).toContain(answer.status);
      expect(await categories()).toEqual(before);
    });
  });
});

describe('the hostile catalogue run as a whole', () => {
  const floor = requestFloor(1200);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
