import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/test-database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const MAX_ID = 9007199254740991;

describe.each(ENGINES)('pets [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const storedPets = () =>
    t.dataSource.query('SELECT id, name, category_id, status FROM pets ORDER BY id');
  const create = async (pet: object) => {
    const response = await t.request('POST', '/v1/pets', { body: pet });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: number; name: string; categoryId: number; status?: string }>();
  };

  describe('POST /v1/pets (createPet)', () => {
    it('stores the pet and answers 201 with it, id assigned', async () => {
      const response = await t.request('POST', '/v1/pets', {
        body: { name: 'Rex', categoryId: 7, status: 'available' },
      });

      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const pet = response.json();
      expect(pet).toEqual({
        id: expect.any(Number),
        name: 'Rex',
        categoryId: 7,
        status: 'available',
      });
      expect(Number.isInteger(pet.id)).toBe(true);
      expect(await storedPets()).toEqual(
        [{ id: pet.id, name: 'Rex', category_id: 7, status: 'available' }].map(asStored(engine)),
      );
    });

    it('leaves status absent when none is given (no default)', async () => {
      const pet = await create({ name: 'Tom', categoryId: 2 });

      expect(pet).toEqual({ id: pet.id, name: 'Tom', categoryId: 2 });
      expect('status' in pet).toBe(false);
      expect(await storedPets()).toEqual(
        [{ id: pet.id, name: 'Tom', category_id: 2, status: null }].map(asStored(engine)),
      );
    });

    it('stores any Unicode name exactly as sent, counting characters not UTF-16 units', async () => {
      const names = [
        'Ünïcødé 🐶 名前',
        '🐈'.repeat(255),
        'x'.repeat(255),
        ' padded ',
        'tab\tand\nnewline',
      ];
      for (const name of names) {
        const pet = await create({ name, categoryId: 1 });
        expect(pet.name).toBe(name);
      }
      expect((await storedPets()).map((row: { name: string }) => row.name)).toEqual(names);
    });

    it('accepts the largest exact JSON integer as categoryId', async () => {
      const pet = await create({ name: 'Big', categoryId: MAX_ID });
      expect(pet.categoryId).toBe(MAX_ID);
      expect((await t.request('GET', `/v1/pets/${pet.id}`)).json().categoryId).toBe(MAX_ID);
    });

    it('accepts application/json with parameters', async () => {
      const response = await t.request('POST', '/v1/pets', {
        body: { name: 'Rex', categoryId: 1 },
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(response.statusCode).toBe(201);
    });

    const NAME =
      'name must be a string of 1 to 255 characters, not only whitespace, without U+0000';
    const CATEGORY = `categoryId must be a JSON integer from 1 to ${MAX_ID}`;
    const STATUS = 'status must be one of available, pending, sold (or absent)';
    const invalidBodies: [string, string, string][] = [
      ['name missing', '{"categoryId":1}', 'name is required'],
      ['name empty', '{"name":"","categoryId":1}', NAME],
      ['name only whitespace', '{"name":" \\t\\n\\u00a0","categoryId":1}', NAME],
      ['name of 256 characters', JSON.stringify({ name: 'x'.repeat(256), categoryId: 1 }), NAME],
      ['name of 256 emoji', JSON.stringify({ name: '🐕'.repeat(256), categoryId: 1 }), NAME],
      ['name a number', '{"name":5,"categoryId":1}', NAME],
      ['name null', '{"name":null,"categoryId":1}', NAME],
      ['name an array', '{"name":["Rex"],"categoryId":1}', NAME],
      ['name an object', '{"name":{"first":"Rex"},"categoryId":1}', NAME],
      ['name with U+0000', '{"name":"Re\\u0000x","categoryId":1}', NAME],
      ['name with an unpaired surrogate', '{"name":"Rex\\ud800","categoryId":1}', NAME],
      ['categoryId missing', '{"name":"Rex"}', 'categoryId is required'],
      ['categoryId a string', '{"name":"Rex","categoryId":"1"}', CATEGORY],
      ['categoryId a fraction', '{"name":"Rex","categoryId":1.5}', CATEGORY],
      ['categoryId true', '{"name":"Rex","categoryId":true}', CATEGORY],
      ['categoryId null', '{"name":"Rex","categoryId":null}', CATEGORY],
      ['categoryId 0', '{"name":"Rex","categoryId":0}', CATEGORY],
      ['categoryId negative', '{"name":"Rex","categoryId":-1}', CATEGORY],
      ['categoryId past 2^53-1', '{"name":"Rex","categoryId":9007199254740992}', CATEGORY],
      ['categoryId huge', '{"name":"Rex","categoryId":1e400}', CATEGORY],
      ['status null', '{"name":"Rex","categoryId":1,"status":null}', STATUS],
      ['status unknown', '{"name":"Rex","categoryId":1,"status":"lost"}', STATUS],
      ['status in capitals', '{"name":"Rex","categoryId":1,"status":"SOLD"}', STATUS],
      ['unknown field id', '{"id":1,"name":"Rex","categoryId":1}', 'id is not a known field'],
      [
        'unknown field',
        '{"name":"Rex","categoryId":1,"colour":"brown"}',
        'colour is not a known field',
      ],
      [
        '__proto__ field',
        '{"name":"Rex","categoryId":1,"__proto__":{"admin":true}}',
        '__proto__ is not a known field',
      ],
      [
        'constructor field',
        '{"name":"Rex","categoryId":1,"constructor":{"name":"x"}}',
        'constructor is not a known field',
      ],
      [
        'toString field',
        '{"name":"Rex","categoryId":1,"toString":1}',
        'toString is not a known field',
      ],
      [
        'hasOwnProperty field',
        '{"name":"Rex","categoryId":1,"hasOwnProperty":1}',
        'hasOwnProperty is not a known field',
      ],
      [
        'valueOf field',
        '{"name":"Rex","categoryId":1,"valueOf":1}',
        'valueOf is not a known field',
      ],
      [
        'several problems',
        '{"categoryId":"1","status":"lost"}',
        `name is required; ${CATEGORY}; ${STATUS}`,
      ],
      [
        'an array',
        '[{"name":"Rex","categoryId":1}]',
        'request body must be a JSON object, not an array',
      ],
      ['a number', '42', 'request body must be a JSON object, not number'],
      ['a string', '"Rex"', 'request body must be a JSON object, not string'],
      ['null', 'null', 'request body is required: expected a JSON object'],
      ['empty', '', 'request body is required: expected a JSON object'],
    ];

    it.each(invalidBodies)(
      'rejects a body with %s: 400, nothing stored',
      async (_case, body, message) => {
        const response = await t.request('POST', '/v1/pets', { body });

        expect(response.statusCode).toBe(400);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
        expect(await storedPets()).toEqual([]);
      },
    );

    it('rejects a POST without any body or content type: 400', async () => {
      const response = await t.request('POST', '/v1/pets');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'request body is required: expected a JSON object',
        status: 400,
      });
    });

    it.each(['{"name":', '{name:"Rex"}', "{'name':'Rex'}", '{"name":"Rex",}', 'nul'])(
      'rejects unparsable JSON %j: 400 MALFORMED_JSON, nothing stored',
      async (body) => {
        const response = await t.request('POST', '/v1/pets', { body });

        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({
          code: 'MALFORMED_JSON',
          message: 'Request body is not valid JSON',
          status: 400,
        });
        expect(await storedPets()).toEqual([]);
      },
    );

    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
    ])('rejects Content-Type %s: 415, nothing stored', async (contentType) => {
      const response = await t.request('POST', '/v1/pets', {
        body: '{"name":"Rex","categoryId":1}',
        headers: { 'content-type': contentType },
      });

      expect(response.statusCode).toBe(415);
      expect(response.json()).toEqual({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'Content-Type must be application/json',
        status: 415,
      });
      expect(await storedPets()).toEqual([]);
    });

    it('rejects a body over BODY_LIMIT_BYTES: 413, nothing stored', async () => {
      const response = await t.request('POST', '/v1/pets', {
        body: { name: 'x'.repeat(16_384), categoryId: 1 },
      });

      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request body exceeds 16384 bytes',
        status: 413,
      });
      expect(await storedPets()).toEqual([]);
    });

    it('rejects deeply nested JSON without a 5xx', async () => {
      const response = await t.request('POST', '/v1/pets', {
        body: `{"name":${'['.repeat(5000)}${']'.repeat(5000)},"categoryId":1}`,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'request body must not nest more than 32 levels deep',
        status: 400,
      });
      expect(await storedPets()).toEqual([]);
    });
  });

  describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
    const DEPRECATION_HEADERS = {
      deprecation: '@1795219200',
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '</v1/pets>; rel="successor-version"',
    };

    it('answers 200 with the pet and the deprecation headers', async () => {
      const pet = await create({ name: 'Rex', categoryId: 3, status: 'sold' });

      const response = await t.request('GET', `/v1/pets/${pet.id}`);

      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ id: pet.id, name: 'Rex', categoryId: 3, status: 'sold' });
      expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });

    it('answers 404 for a well-formed id that does not exist, still with the deprecation headers', async () => {
      const response = await t.request('GET', `/v1/pets/${MAX_ID}`);

      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        code: 'NOT_FOUND',
        message: `No pet with id ${MAX_ID}`,
        status: 404,
      });
      expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });

    it('carries the deprecation headers on 401 too', async () => {
      const response = await t.request('GET', '/v1/pets/1', { key: null });
      expect(response.statusCode).toBe(401);
      expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });

    it.each([
      'abc',
      '0',
      '-1',
      '+1',
      '1.5',
      '1e3',
      '007',
      ' 1',
      '9007199254740992',
      '99999999999999999999',
      '0x10',
      '1'.repeat(200),
    ])('rejects the malformed id %j: 400 naming petId', async (petId) => {
      const response = await t.request('GET', `/v1/pets/${encodeURIComponent(petId)}`);

      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: `petId must be a decimal integer from 1 to ${MAX_ID}`,
        status: 400,
      });
      expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });
  });

  describe('GET /v1/pets (listPets)', () => {
    it('answers [] with no Link header when the catalogue is empty', async () => {
      const response = await t.request('GET', '/v1/pets');

      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('[]');
      expect(response.headers.link).toBeUndefined();
    });

    it('returns pets in ascending id order, 20 by default, with a Link to the next page', async () => {
      const created = [];
      for (let i = 0; i < 21; i++) created.push(await create({ name: `pet ${i}`, categoryId: 1 }));

      const response = await t.request('GET', '/v1/pets');

      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(created.slice(0, 20));
      expect(response.headers.link).toMatch(
        /^<\/v1\/pets\?limit=20&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
      );
    });

    it('builds the next link from its own path, whatever Host and forwarding headers say', async () => {
      for (let i = 0; i < 2; i++) await create({ name: `pet ${i}`, categoryId: 1 });
      const response = await t.request('GET', '/v1/pets?limit=1', {
        headers: {
          host: 'attacker.example',
          'x-forwarded-host': 'attacker.example',
          'x-forwarded-proto': 'https',
        },
      });
      expect(response.headers.link).toMatch(
        /^<\/v1\/pets\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
      );
    });

    it('has no Link on a page that ends exactly at the last pet', async () => {
      for (let i = 0; i < 3; i++) await create({ name: `pet ${i}`, categoryId: 1 });
      const response = await t.request('GET', '/v1/pets?limit=3');
      expect(response.json()).toHaveLength(3);
      expect(response.headers.link).toBeUndefined();
    });

    it('filters by status and keeps the filter in the next link', async () => {
      const statuses = ['available', 'sold', 'pending', 'sold', undefined, 'sold'] as const;
      const created = [];
      for (const status of statuses)
        created.push(await create({ name: 'p', categoryId: 1, ...(status && { status }) }));
      const sold = created.filter((pet) => pet.status === 'sold');

      const first = await t.request('GET', '/v1/pets?status=sold&limit=2');
      expect(first.json()).toEqual(sold.slice(0, 2));
      const next = first.headers.link as string;
      expect(next).toMatch(/^<\/v1\/pets\?limit=2&status=sold&cursor=[A-Za-z0-9_-]+>; rel="next"$/);

      const second = await t.request('GET', linkTarget(next));
      expect(second.json()).toEqual(sold.slice(2));
      expect(second.headers.link).toBeUndefined();
    });

    it('walks every pet that existed at the start exactly once while pets are being added', async () => {
      const existing: number[] = [];
      for (let i = 0; i < 45; i++) {
        existing.push((await create({ name: `pet ${i}`, categoryId: (i % 3) + 1 })).id);
      }

      const seen: number[] = [];
      let url: string | undefined = '/v1/pets?limit=7';
      while (url) {
        const page = await t.request('GET', url);
        expect(page.statusCode).toBe(200);
        seen.push(...page.json().map((pet: { id: number }) => pet.id));
        await create({ name: 'added during the walk', categoryId: 9 });
        // Rows behind the cursor disappearing must not shift the next page (it would with OFFSET).
        await t.dataSource.query(`DELETE FROM pets WHERE id = ${seen[0]}`);
        url = page.headers.link ? linkTarget(page.headers.link as string) : undefined;
      }

      expect(seen.filter((id) => existing.includes(id))).toEqual(existing);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    });

    it.each(['1', '100'])('accepts limit=%s', async (limit) => {
      for (let i = 0; i < 2; i++) await create({ name: 'p', categoryId: 1 });
      const response = await t.request('GET', `/v1/pets?limit=${limit}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toHaveLength(Math.min(Number(limit), 2));
    });

    const LIMIT = 'limit must be a decimal integer from 1 to 100';
    it.each([
      ['limit=', LIMIT],
      ['limit=0', LIMIT],
      ['limit=101', LIMIT],
      ['limit=1.5', LIMIT],
      ['limit=abc', LIMIT],
      ['limit=-5', LIMIT],
      ['limit=05', LIMIT],
      ['limit=1&limit=2', 'limit must be given at most once'],
      ['status=lost', 'status must be one of available, pending, sold'],
      ['status=', 'status must be one of available, pending, sold'],
      ['status=sold&status=sold', 'status must be given at most once'],
      ['cursor=garbage!', 'cursor must be a cursor taken from a Link rel="next" header'],
      ['cursor=YWZ0ZXI6MA', 'cursor must be a cursor taken from a Link rel="next" header'],
      ['cursor=', 'cursor must be a cursor taken from a Link rel="next" header'],
      ['colour=brown', 'colour is not a known field'],
      ['__proto__=x', '__proto__ is not a known field'],
      ['toString=1', 'toString is not a known field'],
      ['valueOf=1&limit=5', 'valueOf is not a known field'],
    ])('rejects ?%s with 400', async (query, message) => {
      const response = await t.request('GET', `/v1/pets?${query}`);

      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
    });
  });
});

function linkTarget(link: string): string {
  return /^<([^>]+)>; rel="next"$/.exec(link)![1];
}

/** PostgreSQL hands bigint columns back as strings in raw queries. */
function asStored(engine: string) {
  return (row: { id: number; category_id: number }) =>
    engine === 'postgres'
      ? { ...row, id: String(row.id), category_id: String(row.category_id) }
      : row;
}
