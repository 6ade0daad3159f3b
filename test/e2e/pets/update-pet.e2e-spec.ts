import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import {
  ALLOWED_TRANSITIONS,
  asStored,
  createPet,
  MAX_ID,
  type Pet,
  storedPets,
} from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

const ALLOWED = ALLOWED_TRANSITIONS;
const STATUSES = ['available', 'pending', 'sold'];

const invalidTransition = (id: number, from: string, message: string) => ({
  code: 'INVALID_TRANSITION',
  message: `Pet ${id} is ${from}: ${message}`,
  status: 409,
});

const preconditionFailed = (id: number) => ({
  code: 'PRECONDITION_FAILED',
  message: `If-Match does not match the current ETag of pet ${id}: read the pet again, then retry`,
  status: 412,
});

const validationFailed = (message: string) => ({ code: 'VALIDATION_FAILED', message, status: 400 });

describe.each(ENGINES)('PATCH /v1/pets/{petId} (updatePet) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const patch = (id: number | string, body: unknown, headers: Record<string, string> = {}) =>
    t.request('PATCH', `/v1/pets/${id}`, { body, headers: { ...MERGE_PATCH, ...headers } });

  /** The pet as stored, with its revision: what every refusal must leave untouched. */
  const stored = async (id: number) =>
    (
      await t.dataSource.query(
        `SELECT id, name, category_id, status, revision FROM pets WHERE id = ${Number(id)}`,
      )
    ).map((row: Record<string, unknown>) => ({
      ...row,
      id: Number(row.id),
      category_id: Number(row.category_id),
      revision: Number(row.revision),
    }))[0];

  const add = (status?: string) =>
    createPet(t, { name: 'Rex', categoryId: 3, ...(status && { status }) });

  describe('the transition table, every cell', () => {
    const cells = ['none', ...STATUSES].flatMap((from) => STATUSES.map((to) => [from, to]));

    it.each(cells)('%s → %s', async (from, to) => {
      const pet = await add(from === 'none' ? undefined : from);
      const before = await stored(pet.id);

      const response = await patch(pet.id, { status: to });

      if (ALLOWED[from].includes(to)) {
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ id: pet.id, name: 'Rex', categoryId: 3, status: to });
        expect(response.headers.etag).toBe(`"${pet.id}-2"`);
        expect(await stored(pet.id)).toEqual({ ...before, status: to, revision: 2 });
        return;
      }
      expect(response.statusCode).toBe(409);
      const allowed = ALLOWED[from];
      const rest =
        allowed.length === 0
          ? `its status can no longer change (asked for ${to})`
          : `its status can change to ${allowed.join(' or ')}, not to ${to}`;
      expect(response.json()).toEqual(invalidTransition(pet.id, from, rest));
      expect(response.headers.etag).toBeUndefined();
      expect(await stored(pet.id)).toEqual(before);
    });
  });

  describe('changing name and categoryId', () => {
    it('changes only the members named, keeps status, and answers 200 with the whole Pet', async () => {
      const pet = await add('pending');

      const renamed = await patch(pet.id, { name: 'Max' });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(renamed.headers['cache-control']).toBe('no-store');
      expect(renamed.json()).toEqual({ id: pet.id, name: 'Max', categoryId: 3, status: 'pending' });

      const moved = await patch(pet.id, { categoryId: MAX_ID, name: 'Bella' });
      expect(moved.json()).toEqual({
        id: pet.id,
        name: 'Bella',
        categoryId: MAX_ID,
        status: 'pending',
      });
      expect(moved.headers.etag).toBe(`"${pet.id}-3"`);
      expect(await storedPets(t)).toEqual(
        [{ id: pet.id, name: 'Bella', category_id: MAX_ID, status: 'pending' }].map(
          asStored(engine),
        ),
      );
    });

    it('keeps a pet without a status without one', async () => {
      const pet = await add();
      const response = await patch(pet.id, { name: 'Max' });
      expect(response.json()).toEqual({ id: pet.id, name: 'Max', categoryId: 3 });
      expect((await stored(pet.id)).status).toBeNull();
    });

    it('takes application/json too, with parameters, and a merge patch with a charset', async () => {
      const pet = await add('available');
      const asJson = await t.request('PATCH', `/v1/pets/${pet.id}`, {
        body: { name: 'Json' },
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(asJson.statusCode).toBe(200);
      const asPatch = await patch(
        pet.id,
        { name: 'Patch' },
        { 'content-type': 'Application/Merge-Patch+JSON; charset=utf-8' },
      );
      expect(asPatch.statusCode).toBe(200);
      expect((await stored(pet.id)).name).toBe('Patch');
    });

    it('a patch that changes nothing answers 200 with the pet and writes nothing', async () => {
      const pet = await add('available');
      const response = await patch(pet.id, { name: 'Rex', categoryId: 3 });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(pet);
      expect(response.headers.etag).toBe(`"${pet.id}-1"`);
      expect((await stored(pet.id)).revision).toBe(1);
    });

    it('every change gives a new ETag, never an earlier one, though the pet looks as before', async () => {
      const pet = await add('available');
      const tags = [];
      for (const name of ['Max', 'Rex', 'Max', 'Rex']) {
        tags.push((await patch(pet.id, { name })).headers.etag);
      }
      expect(new Set(tags).size).toBe(4);
      expect(tags).not.toContain(`"${pet.id}-1"`);
    });
  });

  describe('ETag and If-Match', () => {
    it('createPet, getPet and updatePet give the same strong ETag for the same pet', async () => {
      const created = await t.request('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 3 } });
      const id = created.json().id;
      expect(created.headers.etag).toBe(`"${id}-1"`);
      const read = await t.request('GET', `/v1/pets/${id}`);
      expect(read.headers.etag).toBe(`"${id}-1"`);
      expect(read.headers['cache-control']).toBe('private, no-cache');
      const changed = await patch(id, { status: 'available' });
      expect(changed.headers.etag).toBe(`"${id}-2"`);
      expect((await t.request('GET', `/v1/pets/${id}`)).headers.etag).toBe(`"${id}-2"`);
    });

    it('getPet still answers 304 to If-None-Match, weakly compared, and 200 once the pet changed', async () => {
      const pet = await add('available');
      const etag = `"${pet.id}-1"`;
      for (const tag of [etag, `W/${etag}`, '*']) {
        const unchanged = await t.request('GET', `/v1/pets/${pet.id}`, {
          headers: { 'if-none-match': tag },
        });
        expect(unchanged.statusCode).toBe(304);
        expect(unchanged.headers.etag).toBe(etag);
        expect(unchanged.body).toBe('');
      }
      await patch(pet.id, { status: 'sold' });
      const changed = await t.request('GET', `/v1/pets/${pet.id}`, {
        headers: { 'if-none-match': etag },
      });
      expect(changed.statusCode).toBe(200);
      expect(changed.json()).toEqual({ ...pet, status: 'sold' });
    });

    it('a stale If-Match is 412 and changes nothing', async () => {
      const pet = await add('available');
      await patch(pet.id, { name: 'Max' });
      const before = await stored(pet.id);

      const response = await patch(pet.id, { status: 'sold' }, { 'if-match': `"${pet.id}-1"` });

      expect(response.statusCode).toBe(412);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual(preconditionFailed(pet.id));
      expect(await stored(pet.id)).toEqual(before);
    });

    it.each([
      ['the current tag', (id: number) => `"${id}-1"`],
      ['*', () => '*'],
      ['a list holding the current tag', (id: number) => `"${id}-7", W/"x", "${id}-1"`],
    ])('If-Match with %s is 200', async (_what, ifMatch) => {
      const pet = await add('available');
      const response = await patch(pet.id, { status: 'sold' }, { 'if-match': ifMatch(pet.id) });
      expect(response.statusCode).toBe(200);
      expect(response.headers.etag).toBe(`"${pet.id}-2"`);
    });

    it('a weak tag never matches, even of the current pet: 412', async () => {
      const pet = await add('available');
      const response = await patch(pet.id, { status: 'sold' }, { 'if-match': `W/"${pet.id}-1"` });
      expect(response.statusCode).toBe(412);
      expect((await stored(pet.id)).status).toBe('available');
    });

    it("another pet's tag does not match", async () => {
      const pet = await add('available');
      const other = await add('available');
      const response = await patch(pet.id, { name: 'Max' }, { 'if-match': `"${other.id}-1"` });
      expect(response.statusCode).toBe(412);
    });

    it.each(['', ' , ', 'abc', '"1-1" x', 'W/ "1-1"', '*, "1-1"'])(
      'a malformed If-Match %j is 400, not a write without a condition',
      async (ifMatch) => {
        const pet = await add('available');
        const response = await patch(pet.id, { name: 'Max' }, { 'if-match': ifMatch });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual(
          validationFailed(
            'If-Match must be * or a comma-separated list of entity tags, such as "42-3"',
          ),
        );
        expect((await stored(pet.id)).name).toBe('Rex');
      },
    );
  });

  describe('the order of refusals: 401, 403, 400/413/415, 404, 412, 409', () => {
    let readOnly: string;
    beforeAll(async () => {
      ({ key: readOnly } = await t.app.get(ApiKeyStore).create('till', { scopes: ['pets:read'] }));
    });

    it('401 before anything about the body', async () => {
      const response = await t.request('PATCH', '/v1/pets/1', {
        key: null,
        body: '{broken',
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().code).toBe('UNAUTHORIZED');
    });

    it('a pets:read key gets 403 naming pets:write, even with a broken body, and changes nothing', async () => {
      const pet = await add('available');
      for (const [body, type] of [
        ['{broken', 'application/merge-patch+json'],
        ['{"status":"sold"}', 'text/plain'],
        ['{"status":"sold"}', 'application/merge-patch+json'],
      ]) {
        const response = await t.request('PATCH', `/v1/pets/${pet.id}`, {
          key: readOnly,
          body,
          headers: { 'content-type': type },
        });
        expect(response.statusCode).toBe(403);
        expect(response.json()).toEqual({
          code: 'FORBIDDEN',
          message: 'This API key lacks the scope pets:write',
          status: 403,
        });
      }
      expect((await stored(pet.id)).status).toBe('available');
    });

    it('400 for the body before 404 for the pet', async () => {
      const response = await patch(MAX_ID, { name: '' });
      expect(response.statusCode).toBe(400);
    });

    it('404 for an unknown pet, even with If-Match: *', async () => {
      const response = await patch(MAX_ID, { status: 'sold' }, { 'if-match': '*' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        code: 'NOT_FOUND',
        message: `No pet with id ${MAX_ID}`,
        status: 404,
      });
    });

    it('412 before 409: a stale tag on a refused transition', async () => {
      const pet = await add('sold');
      const response = await patch(pet.id, { status: 'available' }, { 'if-match': '"0-0"' });
      expect(response.statusCode).toBe(412);
    });

    it('409 with the current tag', async () => {
      const pet = await add('sold');
      const response = await patch(
        pet.id,
        { status: 'available' },
        { 'if-match': `"${pet.id}-1"` },
      );
      expect(response.statusCode).toBe(409);
    });

    it('400 for a malformed petId', async () => {
      const response = await patch('007', { name: 'Max' });
      expect(response.json()).toEqual(
        validationFailed(`petId must be a decimal integer from 1 to ${MAX_ID}`),
      );
    });
  });

  describe('bad input: a clear 400 (or 413, 415) and nothing changed', () => {
    let pet: Pet;
    let before: Awaited<ReturnType<typeof stored>>;
    beforeEach(async () => {
      pet = await add('available');
      before = await stored(pet.id);
    });

    const NAME =
      'name must be a string of 1 to 255 characters, not only whitespace, without U+0000';
    const CATEGORY_ID = `categoryId must be a JSON integer from 1 to ${MAX_ID}`;
    const STATUS = 'status must be one of available, pending, sold (a status cannot be removed)';

    it.each([
      [{ name: '' }, NAME],
      [{ name: ' \t' }, NAME],
      [{ name: 'x'.repeat(256) }, NAME],
      [{ name: 'a\u0000b' }, NAME],
      [{ name: 42 }, NAME],
      [{ name: null }, NAME],
      [{ categoryId: 0 }, CATEGORY_ID],
      [{ categoryId: -1 }, CATEGORY_ID],
      [{ categoryId: 1.5 }, CATEGORY_ID],
      [{ categoryId: '1' }, CATEGORY_ID],
      [{ categoryId: true }, CATEGORY_ID],
      [{ categoryId: MAX_ID + 1 }, CATEGORY_ID],
      [{ categoryId: null }, CATEGORY_ID],
      [{ status: 'lost' }, STATUS],
      [{ status: 'SOLD' }, STATUS],
      [{ status: null }, STATUS],
      [{ status: 1 }, STATUS],
      [{ id: 7 }, 'id is not a known field'],
      [{ revision: 7, name: 'Max' }, 'revision is not a known field'],
      [{ name: 'Max', colour: 'red' }, 'colour is not a known field'],
      [{}, 'request body must name at least one of name, categoryId, status'],
      [[], 'request body must be a JSON object, not an array'],
      [[{ name: 'Max' }], 'request body must be a JSON object, not an array'],
      ['"Max"', 'request body must be a JSON object, not string'],
      ['null', 'request body is required: expected a JSON object'],
    ])('%j: 400', async (body, message) => {
      const response = await patch(pet.id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(validationFailed(message));
      expect(await stored(pet.id)).toEqual(before);
    });

    it('an own __proto__ member is named as unknown', async () => {
      const response = await patch(pet.id, '{"__proto__":{"name":"Max"},"name":"Max"}');
      expect(response.json()).toEqual(validationFailed('__proto__ is not a known field'));
      expect(await stored(pet.id)).toEqual(before);
    });

    it('names every offending member at once', async () => {
      const response = await patch(pet.id, { name: '', categoryId: 0, status: null, x: 1 });
      expect(response.json()).toEqual(
        validationFailed(`x is not a known field; ${NAME}; ${CATEGORY_ID}; ${STATUS}`),
      );
    });

    it.each(['{"name":', '{"name":"Max",}', "{'name':'Max'}", 'nul'])(
      'broken JSON %j: 400 MALFORMED_JSON',
      async (body) => {
        const response = await patch(pet.id, body);
        expect(response.json()).toEqual({
          code: 'MALFORMED_JSON',
          message: 'Request body is not valid JSON',
          status: 400,
        });
        expect(await stored(pet.id)).toEqual(before);
      },
    );

    it('an empty body: 400 naming the body', async () => {
      const response = await t.request('PATCH', `/v1/pets/${pet.id}`, { headers: MERGE_PATCH });
      expect(response.json()).toEqual(
        validationFailed('request body is required: expected a JSON object'),
      );
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json'])(
      'Content-Type %s: 415 naming both types, with Accept-Patch',
      async (type) => {
        const response = await patch(pet.id, '{"name":"Max"}', { 'content-type': type });
        expect(response.statusCode).toBe(415);
        expect(response.headers['accept-patch']).toBe(
          'application/merge-patch+json, application/json',
        );
        expect(response.json()).toEqual({
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'Content-Type must be application/merge-patch+json or application/json',
          status: 415,
        });
        expect(await stored(pet.id)).toEqual(before);
      },
    );

    it('createPet still takes application/json only', async () => {
      const response = await t.request('POST', '/v1/pets', {
        body: { name: 'Max', categoryId: 1 },
        headers: MERGE_PATCH,
      });
      expect(response.statusCode).toBe(415);
      expect(response.headers['accept-patch']).toBeUndefined();
      expect(response.json()).toEqual({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'Content-Type must be application/json',
        status: 415,
      });
    });

    it('a body over the limit: 413', async () => {
      const response = await patch(pet.id, { name: 'x'.repeat(20_000) });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request body exceeds 16384 bytes',
        status: 413,
      });
      expect(await stored(pet.id)).toEqual(before);
    });
  });
});
