import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet, type Pet } from '../../support/pets-api.js';
import { startTestApp, TestClock, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

type Json = Record<string, any>;

/** What getPet's headers say, and the instant they name. */
const SUNSET_HEADER = 'Thu, 05 Dec 2030 00:00:00 GMT';
const SUNSET = new Date(SUNSET_HEADER);
const DEPRECATION_HEADERS = {
  deprecation: '@1795219200',
  sunset: SUNSET_HEADER,
  link: '</v1/pets>; rel="successor-version"',
};
const GONE = {
  code: 'GONE',
  message:
    'This operation was removed on Thu, 05 Dec 2030 00:00:00 GMT; use listPets (GET /v1/pets) ' +
    'with the status filter instead',
  status: 410,
};

/**
 * getPet's sunset (docs/api-design.md, "Deprecation"): exactly today's answers before it, 410 GONE
 * from it on. The app's Clock is replaced (never the machine's) and set to each side of the instant
 * the Sunset header names.
 */
describe.each(ENGINES)('getPet around its sunset [%s]', (engine) => {
  const clock = new TestClock();
  let t: TestApp;
  let pet: Pet;

  beforeAll(async () => {
    t = await startTestApp(engine, {}, { clock });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM pets');
    pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
  });

  describe('one millisecond before the sunset', () => {
    beforeEach(() => clock.setTo(new Date(SUNSET.getTime() - 1)));

    it('answers as before: 200 with the pet, 404, 400, each with the deprecation headers', async () => {
      const found = await t.request('GET', `/v1/pets/${pet.id}`);
      const missing = await t.request('GET', `/v1/pets/${pet.id + 1}`);
      const malformed = await t.request('GET', '/v1/pets/abc');

      expect(found.statusCode).toBe(200);
      expect(found.json()).toEqual(pet);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({
        code: 'NOT_FOUND',
        message: `No pet with id ${pet.id + 1}`,
        status: 404,
      });
      expect(malformed.statusCode).toBe(400);
      for (const response of [found, missing, malformed])
        expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });
  });

  describe.each([
    ['at the sunset', SUNSET],
    ['a year after it', new Date('2031-12-05T00:00:00Z')],
  ])('%s', (_when, instant) => {
    beforeEach(() => clock.setTo(instant));

    it.each([
      ['an existing pet', () => `/v1/pets/${pet.id}`],
      ['an id with no pet', () => `/v1/pets/${pet.id + 1}`],
      ['a malformed id', () => '/v1/pets/abc'],
    ])('answers 410 GONE naming the replacement for %s, with the Link to it', async (_c, url) => {
      const response = await t.request('GET', url());

      expect(response.statusCode).toBe(410);
      expect(response.json()).toEqual(GONE);
      expect(response.headers).toMatchObject({
        ...DEPRECATION_HEADERS,
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      });
      expect(response.headers.etag).toBeUndefined();
    });

    it('still answers 401 first to a request without a valid key', async () => {
      const response = await t.request('GET', `/v1/pets/${pet.id}`, { key: null });

      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(response.headers).toMatchObject(DEPRECATION_HEADERS);
    });

    it('answers 410 to a conditional request too, never a 304', async () => {
      clock.setTo(new Date(SUNSET.getTime() - 1));
      const before = await t.request('GET', `/v1/pets/${pet.id}`);
      clock.setTo(instant);

      const response = await t.request('GET', `/v1/pets/${pet.id}`, {
        headers: { 'if-none-match': String(before.headers.etag) },
      });

      expect(response.statusCode).toBe(410);
      expect(response.json()).toEqual(GONE);
    });

    it('leaves the successor working: listPets with the status filter finds the pet', async () => {
      const response = await t.request('GET', '/v1/pets?status=available');

      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual([pet]);
    });
  });
});

/**
 * The date is written once (src/pets/get-pet-deprecation.ts); the headers, the OpenAPI document,
 * the design page and the README must all say it, and the 410 must begin at the very instant the
 * Sunset header names.
 */
describe('getPet sunset: headers, OpenAPI document and docs agree', () => {
  const clock = new TestClock();
  let t: TestApp;
  let headers: Record<string, unknown>;
  let getPet: Json;

  beforeAll(async () => {
    t = await startTestApp('sqlite', {}, { clock });
    headers = (await t.request('GET', '/v1/pets/1')).headers;
    getPet = JSON.parse((await t.request('GET', '/docs-json', { key: null })).body).paths[
      '/pets/{petId}'
    ].get;
  });
  afterAll(() => t?.close());

  it('the 410 begins exactly at the instant of the Sunset header', async () => {
    const sunset = new Date(String(headers.sunset));
    clock.setTo(new Date(sunset.getTime() - 1));
    expect((await t.request('GET', '/v1/pets/1')).statusCode).toBe(404);
    clock.setTo(sunset);
    expect((await t.request('GET', '/v1/pets/1')).statusCode).toBe(410);
  });

  it('the OpenAPI document marks getPet deprecated and gives the same date everywhere', () => {
    const sunset = String(headers.sunset);
    expect(getPet.deprecated).toBe(true);
    expect(getPet.description).toContain(`removed on ${sunset}`);
    for (const status of ['200', '304', '410'])
      expect(getPet.responses[status].headers).toMatchObject({
        Sunset: { schema: { example: sunset } },
        Deprecation: { schema: { example: headers.deprecation } },
        Link: { schema: { example: headers.link } },
      });
    expect(getPet.responses['410'].content['application/json'].examples.GONE.value).toEqual(GONE);
  });

  it('the design page and the README say the same date and header values', () => {
    const day = new Date(String(headers.sunset)).toISOString().slice(0, 10);
    const design = readFileSync('docs/api-design.md', 'utf8');
    const start = design.indexOf('## Deprecation');
    const deprecationSection = design.slice(start, design.indexOf('\n## ', start));
    expect(deprecationSection).toContain(`\`Sunset: ${String(headers.sunset)}\``);
    expect(deprecationSection).toContain(`\`Deprecation: ${String(headers.deprecation)}\``);
    expect(deprecationSection).toContain(`removed on ${day}`);
    expect(deprecationSection).toContain(`From ${day}T00:00:00Z on`);
    const readme = readFileSync('README.md', 'utf8');
    const readmeSection = readme.slice(readme.indexOf('### Deprecation of getPet'));
    expect(readmeSection).toContain(`removed on ${day}`);
    expect(readmeSection).toContain(String(headers.sunset));
  });
});
