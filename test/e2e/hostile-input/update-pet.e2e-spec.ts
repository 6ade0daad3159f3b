import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNamesFields } from '../../support/answer-checks.js';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import {
  expectedCreate,
  hostileBody,
  jsonStyle,
  PET_NAME_RULE,
  petProblems,
  topLevelKeys,
  writeJson,
} from '../../support/hostile-bodies.js';
import {
  authorizations,
  JSON_CONTENT_TYPES,
  NOT_MEDIA_TYPES,
  OTHER_MEDIA_TYPES,
} from '../../support/hostile-headers.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { OpenApiDocument, validValue } from '../../support/openapi-arbitraries.js';
import { ALLOWED_TRANSITIONS } from '../../support/pets-api.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to updatePet (PATCH /v1/pets/{petId}), derived from the committed OpenAPI
 * document: every PetPatch the schema allows is applied exactly or refused by the lifecycle table
 * (409); mutated patches, odd content types, keys and If-Match values get exactly the answer the
 * oracle gives, never a 5xx, and a refusal changes nothing. Seed and run scale: see
 * test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const updatePet = doc.operation('updatePet');
const petPatch = updatePet.requestBody!;
const problemsOf = petProblems(doc, petPatch);
const newPet = doc.operation('createPet').requestBody!;

type Stored = Record<string, unknown>;
type Outcome =
  | { status: 200; pet: Stored }
  | { status: 400 | 401 | 404 | 409 | 412 | 413 | 415; code?: string; offending?: string[] };

/** The answer a patch of `bytes`, sent as JSON with a valid key, must get for the pet `current`. */
function expectedUpdate(bytes: Buffer, bodyLimit: number, current: Stored): Outcome {
  const parsed = expectedCreate(bytes, bodyLimit, problemsOf);
  if (parsed.status !== 201) return parsed;
  const patch = parsed.pet;
  const from = (current.status as string | undefined) ?? 'none';
  if ('status' in patch && !ALLOWED_TRANSITIONS[from].includes(patch.status as string))
    return { status: 409 };
  return { status: 200, pet: { ...current, ...patch } };
}

describe.each(ENGINES)('hostile input to updatePet through the real app [%s]', (engine) => {
  let app: HostileApp;
  const initial = fc.record({
    pet: validValue(doc, newPet, PET_NAME_RULE) as fc.Arbitrary<Stored>,
    // Each revision is the ETag's, so a stale tag can be named.
    renames: fc.integer({ min: 0, max: 2 }),
  });

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
  });
  afterAll(() => app?.close());

  /** A new pet, renamed `renames` times, with its current ETag. */
  async function addPet({ pet, renames }: { pet: Stored; renames: number }) {
    const created = await app.t.request('POST', '/v1/pets', { body: pet });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    let etag = String(created.headers.etag);
    for (let i = 0; i < renames; i++) {
      const renamed = await app.t.request('PATCH', `/v1/pets/${id}`, {
        body: { name: `renamed ${i}` },
      });
      etag = String(renamed.headers.etag);
    }
    return { id, etag, current: (await app.storedPet(id))! };
  }

  const revisionOf = async (id: number): Promise<number | undefined> => {
    const [row] = await app.t.dataSource.query(`SELECT revision FROM pets WHERE id = ${id}`);
    return row && Number(row.revision);
  };

  /** Sends the patch and holds the answer and the stored pet to what the oracle expects. */
  async function expectUpdate(
    id: number,
    request: { headers: Record<string, string | undefined>; payload: Buffer | string },
    expected: Outcome,
  ): Promise<void> {
    const before = await app.storedPet(id);
    const revision = await revisionOf(id);
    const payload = Buffer.from(request.payload);
    const response = await app.send('PATCH', `/v1/pets/${id}`, request, {
      operation: updatePet,
      echoable: topLevelKeys(payload),
    });
    expect(response.status, response.body).toBe(expected.status);
    if (expected.status !== 200) {
      expect(await app.storedPet(id), 'a refused updatePet changed the pet').toEqual(before);
      expect(await revisionOf(id)).toBe(revision);
      const body = JSON.parse(response.body);
      if (expected.code) expect(body.code).toBe(expected.code);
      if (expected.code === 'VALIDATION_FAILED')
        expectNamesFields(body.message, expected.offending ?? []);
      return;
    }
    expect(JSON.parse(response.body)).toEqual({ ...expected.pet, id });
    expect(await app.storedPet(id)).toEqual(expected.pet);
    const changed = JSON.stringify(expected.pet) !== JSON.stringify(before);
    expect(await revisionOf(id)).toBe(changed ? revision! + 1 : revision);
    expect(response.headers.etag).toBe(`"${id}-${await revisionOf(id)}"`);
  }

  it('updatePet: every PetPatch the schema allows is applied exactly, or refused by the lifecycle table', async () => {
    const request = fc.record({
      initial,
      patch: validValue(doc, petPatch, PET_NAME_RULE) as fc.Arbitrary<Stored>,
      style: jsonStyle,
      contentType: fc.oneof(
        JSON_CONTENT_TYPES,
        fc.constantFrom(
          'application/merge-patch+json',
          'APPLICATION/MERGE-PATCH+JSON; charset=utf-8',
        ),
      ),
    });
    await assertProperty('updatePet valid', engine, 500, request, async (r) => {
      const { id, current } = await addPet(r.initial);
      const payload = writeJson(r.patch, r.style);
      await expectUpdate(
        id,
        { headers: { authorization: app.bearer(), 'content-type': r.contentType }, payload },
        expectedUpdate(Buffer.from(payload), app.bodyLimit, current),
      );
    });
  });

  it('updatePet: hostile patches get exactly the answer the oracle gives, and a refusal changes nothing', async () => {
    const request = fc.record({
      initial,
      body: hostileBody(doc, petPatch, PET_NAME_RULE, app.bodyLimit),
    });
    await assertProperty('updatePet hostile body', engine, 1000, request, async (r) => {
      const { id, current } = await addPet(r.initial);
      await expectUpdate(
        id,
        {
          headers: {
            authorization: app.bearer(),
            'content-type': 'application/merge-patch+json',
          },
          payload: r.body.bytes,
        },
        expectedUpdate(r.body.bytes, app.bodyLimit, current),
      );
    });
  });

  it('updatePet: the size limit, the key, If-Match syntax, the content type, the body, the pet, If-Match and the table decide in that order', async () => {
    const MERGE = ['application/merge-patch+json', 'application/merge-patch+json; charset=utf-8'];
    const request = fc.record({
      initial,
      body: fc.oneof(
        fc
          .tuple(validValue(doc, petPatch, PET_NAME_RULE), jsonStyle)
          .map(([patch, style]) => Buffer.from(writeJson(patch, style))),
        hostileBody(doc, petPatch, PET_NAME_RULE, app.bodyLimit).map(({ bytes }) => bytes),
      ),
      contentType: fc.oneof(
        fc.oneof(JSON_CONTENT_TYPES, fc.constantFrom(...MERGE)).map((value) => ({
          value,
          kind: 'json' as const,
        })),
        OTHER_MEDIA_TYPES.map((value) => ({ value, kind: 'other' as const })),
        NOT_MEDIA_TYPES.map((value) => ({ value, kind: 'none' as const })),
      ),
      ifMatch: fc.constantFrom('absent', 'current', 'any', 'stale', 'weak', 'malformed'),
      authorization: authorizations(app.t.key),
      unknownPet: fc.boolean(),
    });
    await assertProperty('updatePet headers', engine, 1000, request, async (r) => {
      const { id, etag, current } = await addPet(r.initial);
      const ifMatch = {
        absent: undefined,
        current: etag,
        any: '*',
        stale: `"${id}-0"`,
        weak: `W/${etag}`,
        malformed: 'not-a-tag',
      }[r.ifMatch];
      const target = r.unknownPet ? id + 1_000_000 : id;
      await expectUpdate(
        target,
        {
          headers: {
            authorization: r.authorization.value,
            'content-type': r.contentType.value,
            'if-match': ifMatch,
          },
          payload: r.body,
        },
        expectedInOrder(r, current),
      );
      if (target !== id) expect(await app.storedPet(id)).toEqual(current);
    });

    /** The documented order (docs/api-design.md): a body over the limit is refused while read. */
    function expectedInOrder(
      r: {
        body: Buffer;
        contentType: { kind: 'json' | 'other' | 'none' };
        ifMatch: string;
        authorization: { valid: boolean };
        unknownPet: boolean;
      },
      current: Stored,
    ): Outcome {
      if (r.contentType.kind === 'json' && r.body.length > app.bodyLimit) return { status: 413 };
      if (!r.authorization.valid) return { status: 401 };
      // Headers are read before the body is: a malformed If-Match is the 400, whatever the body.
      if (r.ifMatch === 'malformed') return { status: 400, code: 'VALIDATION_FAILED' };
      if (r.contentType.kind === 'other') return { status: 415 };
      if (r.body.length > 0 && r.contentType.kind === 'none') return { status: 415 };
      const content = expectedUpdate(r.body, app.bodyLimit, current);
      if (content.status === 400) return content;
      if (r.unknownPet) return { status: 404 };
      if (r.ifMatch === 'stale' || r.ifMatch === 'weak') return { status: 412 };
      return content;
    }
  });
});

describe('the hostile updatePet run as a whole', () => {
  const floor = requestFloor(500 + 1000 + 1000);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
