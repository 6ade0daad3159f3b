import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { percentEncoded } from '../../support/hostile-urls.js';
import {
  invalidParameterText,
  OpenApiDocument,
  parameterConforms,
  serializeParameter,
  validValue,
} from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to getPet (GET /v1/pets/{petId}), derived from the committed OpenAPI document: an
 * id the schema allows is a 200 with the stored pet or a 404; any other path segment (out of range,
 * not decimal, binary, percent-encoded every way) is a 400, never a 5xx. Seed and run scale: see
 * test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const getPet = doc.operation('getPet');

describe.each(ENGINES)('hostile input to getPet through the real app [%s]', (engine) => {
  let app: HostileApp;

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    // Stored pets, so that ids the schema allows find one as often as not.
    await app.seedPets(500);
  });
  afterAll(() => app?.close());

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
      const text = 'text' in id ? id.text : String(await app.existingId(id.existing));
      const segment = percentEncoded(text, everyByte);
      const answer = await app.send(
        'GET',
        getPet.path.replace(`{${petId.name}}`, segment),
        { headers: { authorization: app.bearer() } },
        { operation: segment.length <= 256 ? getPet : undefined },
      );
      if (!parameterConforms(doc, petId.schema, text)) {
        expect(answer.status, answer.body).toBe(400);
        return;
      }
      const stored = await app.storedPet(Number(text));
      expect(answer.status, answer.body).toBe(stored ? 200 : 404);
      expect(answer.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      if (stored) expect(JSON.parse(answer.body)).toEqual({ ...stored, id: Number(text) });
    });
  });
});

describe('the hostile getPet run as a whole', () => {
  const floor = requestFloor(1500);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
