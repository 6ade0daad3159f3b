import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import {
  clearEvents,
  feedEvents,
  putCategory,
  storedCategories,
} from '../../support/catalogue-api.js';
import { createPet, MAX_ID, nextPage } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const error = (status: number, code: string, message: string) => ({ code, message, status });

const nameTaken = (name: string) =>
  error(
    409,
    'CATEGORY_NAME_TAKEN',
    `Another category is already named ${JSON.stringify(name)}: choose another name`,
  );

const preconditionFailed = (id: number) =>
  error(
    412,
    'PRECONDITION_FAILED',
    `If-Match does not match the current ETag of category ${id}: read the category again, then retry`,
  );

const notFound = (id: number) => error(404, 'NOT_FOUND', `No category with id ${id}`);

const NAME_MESSAGE =
  'name must be a string of 1 to 255 characters, not only whitespace, without U+0000';
const ID_MESSAGE = `categoryId must be a decimal integer from 1 to ${MAX_ID}`;

describe.each(ENGINES)('categories [%s]', (engine) => {
  let t: TestApp;
  let readOnlyKey: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    ({ key: readOnlyKey } = await t.app
      .get(ApiKeyStore)
      .create('storefront', { scopes: ['pets:read'] }));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM categories');
    await t.dataSource.query('DELETE FROM pets');
    await clearEvents(t);
  });

  const put = (id: number | string, body: unknown, headers: Record<string, string> = {}) =>
    t.request('PUT', `/v1/categories/${id}`, { body, headers });

  describe('PUT /v1/categories/{categoryId} (putCategory)', () => {
    it('names an unnamed id: 201 with the Category and a strong ETag, stored as sent', async () => {
      const response = await put(7, { name: 'Dogs 🐶' });

      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.etag).toBe('"7-1"');
      expect(response.body).toBe('{"id":7,"name":"Dogs 🐶"}');
      expect(await storedCategories(t)).toEqual([{ id: 7, name: 'Dogs 🐶', revision: 1 }]);
    });

    it('renames a named one: 200 and a new ETag; the same name again changes nothing', async () => {
      await putCategory(t, MAX_ID, 'Dogs');

      const renamed = await put(MAX_ID, { name: 'Hounds' });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toEqual({ id: MAX_ID, name: 'Hounds' });
      expect(renamed.headers.etag).toBe(`"${MAX_ID}-2"`);

      const again = await put(MAX_ID, { name: 'Hounds' });
      expect(again.statusCode).toBe(200);
      expect(again.headers.etag).toBe(`"${MAX_ID}-2"`);
      expect(await storedCategories(t)).toEqual([{ id: MAX_ID, name: 'Hounds', revision: 2 }]);
    });

    it('a name another category has is 409 CATEGORY_NAME_TAKEN and changes nothing', async () => {
      await putCategory(t, 1, 'Dogs');
      await putCategory(t, 2, 'Cats');

      const onNew = await put(3, { name: 'Dogs' });
      const onRename = await put(2, { name: 'Dogs' });

      expect(onNew.statusCode).toBe(409);
      expect(onNew.json()).toEqual(nameTaken('Dogs'));
      expect(onRename.json()).toEqual(nameTaken('Dogs'));
      expect(await storedCategories(t)).toEqual([
        { id: 1, name: 'Dogs', revision: 1 },
        { id: 2, name: 'Cats', revision: 1 },
      ]);
    });

    it('compares names exactly: case, spaces and accents make different names', async () => {
      const names = ['Dogs', 'dogs', ' Dogs', 'Dögs', 'Dogs\u200b'];
      for (const [i, name] of names.entries()) await putCategory(t, i + 1, name);
      expect((await storedCategories(t)).map(({ name }) => name)).toEqual(names);
    });

    it('If-Match: the current tag renames, a stale or weak one is 412 and changes nothing', async () => {
      await putCategory(t, 4, 'Dogs');
      expect((await put(4, { name: 'Hounds' }, { 'if-match': '"4-1"' })).statusCode).toBe(200);

      for (const tag of ['"4-1"', 'W/"4-2"', '"5-2"']) {
        const response = await put(4, { name: 'Puppies' }, { 'if-match': tag });
        expect(response.statusCode).toBe(412);
        expect(response.json()).toEqual(preconditionFailed(4));
      }
      expect((await put(4, { name: 'Puppies' }, { 'if-match': '"1-1", "4-2"' })).statusCode).toBe(
        200,
      );
      expect((await put(4, { name: 'Dogs' }, { 'if-match': '*' })).statusCode).toBe(200);
      expect(await storedCategories(t)).toEqual([{ id: 4, name: 'Dogs', revision: 4 }]);
    });

    it('an id without a name matches no If-Match, not even *', async () => {
      const response = await put(9, { name: 'Dogs' }, { 'if-match': '*' });
      expect(response.statusCode).toBe(412);
      expect(response.json()).toEqual(preconditionFailed(9));
      expect(await storedCategories(t)).toEqual([]);
    });

    it.each([
      ['no name', {}, 'name is required'],
      ['a null name', { name: null }, NAME_MESSAGE],
      ['a blank name', { name: ' \t' }, NAME_MESSAGE],
      ['a name of 256 characters', { name: 'x'.repeat(256) }, NAME_MESSAGE],
      ['a number', { name: 7 }, NAME_MESSAGE],
      ['an unknown member', { name: 'Dogs', id: 3 }, 'id is not a known field'],
    ])('%s is a 400 naming the field, and stores nothing', async (_case, body, message) => {
      const response = await put(1, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(error(400, 'VALIDATION_FAILED', message));
      expect(await storedCategories(t)).toEqual([]);
    });

    it.each(['0', '-1', '01', '1.5', 'abc', '9007199254740992', '%20'])(
      'a malformed id %j is a 400 naming categoryId',
      async (id) => {
        const response = await put(id, { name: 'Dogs' });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual(error(400, 'VALIDATION_FAILED', ID_MESSAGE));
      },
    );

    it('answers in the order 401, 403, 400, 412, 409', async () => {
      await putCategory(t, 1, 'Dogs');
      await putCategory(t, 2, 'Cats');
      const request = (key: string | null, body: unknown, ifMatch?: string) =>
        t.request('PUT', '/v1/categories/2', {
          key,
          body,
          headers: ifMatch ? { 'if-match': ifMatch } : {},
        });

      expect((await request(null, { name: '' }, '"0-0"')).statusCode).toBe(401);
      expect((await request(readOnlyKey, { name: '' }, '"0-0"')).statusCode).toBe(403);
      expect((await request(t.key, { name: '' }, '"0-0"')).statusCode).toBe(400);
      expect((await request(t.key, { name: 'Dogs' }, '"0-0"')).statusCode).toBe(412);
      expect((await request(t.key, { name: 'Dogs' }, '"2-1"')).statusCode).toBe(409);
      expect(await storedCategories(t)).toEqual([
        { id: 1, name: 'Dogs', revision: 1 },
        { id: 2, name: 'Cats', revision: 1 },
      ]);
    });
  });

  describe('GET /v1/categories/{categoryId} (getCategory)', () => {
    it('answers 200 with the Category and its ETag, 304 to it, and 404 for an unnamed id', async () => {
      await putCategory(t, 3, 'Birds');

      const read = await t.request('GET', '/v1/categories/3', { key: readOnlyKey });
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual({ id: 3, name: 'Birds' });
      expect(read.headers.etag).toBe('"3-1"');
      expect(read.headers['cache-control']).toBe('private, no-cache');

      const unchanged = await t.request('GET', '/v1/categories/3', {
        headers: { 'if-none-match': '"3-1"' },
      });
      expect(unchanged.statusCode).toBe(304);

      const missing = await t.request('GET', '/v1/categories/4');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual(notFound(4));
    });
  });

  describe('DELETE /v1/categories/{categoryId} (deleteCategory)', () => {
    it('removes the name only: 204, then 404 and gone from the list; pets keep their categoryId', async () => {
      await putCategory(t, 5, 'Fish');
      const pet = await createPet(t, { name: 'Nemo', categoryId: 5 });

      const deleted = await t.request('DELETE', '/v1/categories/5');
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');

      expect((await t.request('GET', '/v1/categories/5')).json()).toEqual(notFound(5));
      expect((await t.request('GET', '/v1/categories')).json()).toEqual([]);
      expect((await t.request('DELETE', '/v1/categories/5')).json()).toEqual(notFound(5));
      expect((await t.request('GET', `/v1/pets/${pet.id}`)).json()).toEqual(pet);
    });

    it('frees the name, and the id named again never gets an ETag it had before', async () => {
      await putCategory(t, 5, 'Fish');
      await t.request('DELETE', '/v1/categories/5', { headers: { 'if-match': '"5-1"' } });

      await putCategory(t, 6, 'Fish');
      const again = await put(5, { name: 'Fish' });
      expect(again.statusCode).toBe(409);
      const renamed = await put(5, { name: 'Reef fish' });
      expect(renamed.statusCode).toBe(201);
      expect(renamed.headers.etag).toBe('"5-3"');
      expect((await put(5, { name: 'Trout' }, { 'if-match': '"5-1"' })).statusCode).toBe(412);
    });

    it('answers in the order 401, 403, 400, 404, 412', async () => {
      await putCategory(t, 5, 'Fish');
      const remove = (id: string, key: string | null, ifMatch: string) =>
        t.request('DELETE', `/v1/categories/${id}`, { key, headers: { 'if-match': ifMatch } });

      expect((await remove('x', null, '"5-9"')).statusCode).toBe(401);
      expect((await remove('x', readOnlyKey, '"5-9"')).statusCode).toBe(403);
      expect((await remove('x', t.key, '"5-9"')).statusCode).toBe(400);
      expect((await remove('6', t.key, '"5-9"')).statusCode).toBe(404);
      const stale = await remove('5', t.key, '"5-9"');
      expect(stale.statusCode).toBe(412);
      expect(stale.json()).toEqual(preconditionFailed(5));
      expect(await storedCategories(t)).toEqual([{ id: 5, name: 'Fish', revision: 1 }]);
    });
  });

  describe('GET /v1/categories (listCategories)', () => {
    it('pages named categories in id order with Link rel="next" until the last page', async () => {
      for (const [id, name] of [
        [30, 'Reptiles'],
        [2, 'Cats'],
        [11, 'Birds'],
        [1, 'Dogs'],
        [MAX_ID, 'Fish'],
      ] as const)
        await putCategory(t, id, name);
      await t.request('DELETE', '/v1/categories/11');

      const seen = [];
      let url = '/v1/categories?limit=2';
      for (;;) {
        const page = await t.request('GET', url, { key: readOnlyKey });
        expect(page.statusCode).toBe(200);
        seen.push(page.json());
        if (!page.headers.link) break;
        url = nextPage(String(page.headers.link));
        expect(url).toMatch(/^\/v1\/categories\?limit=2&cursor=[A-Za-z0-9_-]+$/);
      }
      expect(seen).toEqual([
        [
          { id: 1, name: 'Dogs' },
          { id: 2, name: 'Cats' },
        ],
        [
          { id: 30, name: 'Reptiles' },
          { id: MAX_ID, name: 'Fish' },
        ],
      ]);
    });

    it.each([
      ['limit=0', 'limit must be a decimal integer from 1 to 100'],
      ['limit=101', 'limit must be a decimal integer from 1 to 100'],
      ['cursor=abc', 'cursor must be a cursor taken from a Link rel="next" header'],
      ['name=Dogs', 'name is not a known field'],
    ])('?%s is a 400', async (query, message) => {
      const response = await t.request('GET', `/v1/categories?${query}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(error(400, 'VALIDATION_FAILED', message));
    });
  });

  describe('pets are unchanged by categories', () => {
    it('a pet of an unnamed category is created as ever, and a named one adds nothing to the pet', async () => {
      const unnamed = await t.request('POST', '/v1/pets', {
        body: { name: 'Rex', categoryId: 77 },
      });
      expect(unnamed.statusCode).toBe(201);
      expect(unnamed.body).toBe(`{"id":${unnamed.json().id},"name":"Rex","categoryId":77}`);

      await putCategory(t, 77, 'Dogs');
      const read = await t.request('GET', `/v1/pets/${unnamed.json().id}`);
      expect(read.body).toBe(unnamed.body);
    });
  });

  describe('events', () => {
    it('category.updated on naming and renaming (with the old name), category.deleted with the category as it was', async () => {
      await putCategory(t, 8, 'Dogs');
      await putCategory(t, 8, 'Hounds', 200);
      await putCategory(t, 8, 'Hounds', 200);
      await put(9, { name: 'Hounds' });
      await t.request('DELETE', '/v1/categories/8');

      const events = await feedEvents(t, 3);

      expect(events.map(({ type, data }) => ({ type, data }))).toEqual([
        { type: 'category.updated', data: { category: { id: 8, name: 'Dogs' } } },
        {
          type: 'category.updated',
          data: { category: { id: 8, name: 'Hounds' }, previous: { name: 'Dogs' } },
        },
        { type: 'category.deleted', data: { category: { id: 8, name: 'Hounds' } } },
      ]);
    });
  });
});
