import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { asStored, createPet, MAX_ID, storedPets } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

describe.each(ENGINES)('POST /v1/pets (createPet) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

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
    expect(await storedPets(t)).toEqual(
      [{ id: pet.id, name: 'Rex', category_id: 7, status: 'available' }].map(asStored(engine)),
    );
  });

  it('leaves status absent when none is given (no default)', async () => {
    const pet = await createPet(t, { name: 'Tom', categoryId: 2 });

    expect(pet).toEqual({ id: pet.id, name: 'Tom', categoryId: 2 });
    expect('status' in pet).toBe(false);
    expect(await storedPets(t)).toEqual(
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
      const pet = await createPet(t, { name, categoryId: 1 });
      expect(pet.name).toBe(name);
    }
    expect((await storedPets(t)).map((row: { name: string }) => row.name)).toEqual(names);
  });

  it('accepts the largest exact JSON integer as categoryId', async () => {
    const pet = await createPet(t, { name: 'Big', categoryId: MAX_ID });
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

  const NAME = 'name must be a string of 1 to 255 characters, not only whitespace, without U+0000';
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
    ['valueOf field', '{"name":"Rex","categoryId":1,"valueOf":1}', 'valueOf is not a known field'],
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
      expect(await storedPets(t)).toEqual([]);
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
      expect(await storedPets(t)).toEqual([]);
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
    expect(await storedPets(t)).toEqual([]);
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
    expect(await storedPets(t)).toEqual([]);
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
    expect(await storedPets(t)).toEqual([]);
  });
});
