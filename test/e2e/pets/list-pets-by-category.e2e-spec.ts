import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet, MAX_ID, nextPage, type Pet } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const STATUSES = [undefined, 'available', 'pending', 'sold'] as const;

describe.each(ENGINES)('GET /v1/pets?categoryId= (listPets by category) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  /** Pets in categories 1–3 and every status, in creation (id) order. */
  async function addMixed(count: number): Promise<Pet[]> {
    const pets = [];
    for (let i = 0; i < count; i++) {
      const status = STATUSES[i % 4];
      pets.push(
        await createPet(t, { name: `p${i}`, categoryId: (i % 3) + 1, ...(status && { status }) }),
      );
    }
    return pets;
  }

  /** Every page from `url` on, following Link rel="next", checking each link's form. */
  async function walk(url: string, linkForm: RegExp): Promise<Pet[]> {
    const pets: Pet[] = [];
    for (;;) {
      const page = await t.request('GET', url);
      expect(page.statusCode, page.body).toBe(200);
      pets.push(...page.json<Pet[]>());
      const link = page.headers.link as string | undefined;
      if (!link) return pets;
      expect(link).toMatch(linkForm);
      url = nextPage(link);
    }
  }

  it('lists only the category, in id order, paged with categoryId in the next link', async () => {
    const pets = await addMixed(24);
    const walked = await walk(
      '/v1/pets?categoryId=2&limit=3',
      /^<\/v1\/pets\?limit=3&categoryId=2&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    );
    expect(walked).toEqual(pets.filter(({ categoryId }) => categoryId === 2));
  });

  it('with status, lists the pets that match both', async () => {
    const pets = await addMixed(48);
    const walked = await walk(
      '/v1/pets?status=sold&categoryId=3&limit=2',
      /^<\/v1\/pets\?limit=2&status=sold&categoryId=3&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    );
    const expected = pets.filter((pet) => pet.categoryId === 3 && pet.status === 'sold');
    expect(expected.length).toBeGreaterThan(2);
    expect(walked).toEqual(expected);
  });

  it('a category no pet has, the largest id included, is an empty page', async () => {
    await addMixed(4);
    for (const query of ['categoryId=9', `categoryId=${MAX_ID}`, 'categoryId=1&status=pending']) {
      const response = await t.request('GET', `/v1/pets?${query}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    }
  });

  it('walks every matching pet that existed at the start exactly once while pets are being added', async () => {
    const existing = (await addMixed(60)).filter(
      (pet) => pet.categoryId === 2 && pet.status === 'available',
    );
    let adding = true;
    const adder = (async () => {
      let i = 0;
      while (adding) await createPet(t, { name: `new ${i++}`, categoryId: 2, status: 'available' });
    })();

    const walked = await walk('/v1/pets?categoryId=2&status=available&limit=2', /rel="next"$/);
    adding = false;
    await adder;

    const ids = walked.map(({ id }) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(walked.every((pet) => pet.categoryId === 2 && pet.status === 'available')).toBe(true);
    expect(walked.slice(0, existing.length)).toEqual(existing);
  });

  it.each([['0'], ['-1'], ['01'], ['1.5'], ['1e3'], ['abc'], [''], ['9007199254740992'], ['true']])(
    'categoryId=%j is a 400 naming it',
    async (value) => {
      const response = await t.request('GET', `/v1/pets?categoryId=${encodeURIComponent(value)}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        code: 'VALIDATION_FAILED',
        message: `categoryId must be a decimal integer from 1 to ${MAX_ID}`,
        status: 400,
      });
    },
  );

  it('categoryId given twice is a 400, and with a bad status both are named', async () => {
    const twice = await t.request('GET', '/v1/pets?categoryId=1&categoryId=2');
    expect(twice.json()).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'categoryId must be given at most once',
      status: 400,
    });
    const both = await t.request('GET', '/v1/pets?categoryId=0&status=lost');
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toContain('status must be one of available, pending, sold');
    expect(both.json().message).toContain('categoryId must be a decimal integer');
  });
});
