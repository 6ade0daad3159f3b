import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet, MAX_ID } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

describe.each(ENGINES)('GET /v1/pets/{petId} (getPet, deprecated) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const DEPRECATION_HEADERS = {
    deprecation: '@1795219200',
    sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
    link: '</v1/pets>; rel="successor-version"',
  };

  it('answers 200 with the pet and the deprecation headers', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 3, status: 'sold' });

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
