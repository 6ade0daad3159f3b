import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet, nextPage } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

describe.each(ENGINES)('GET /v1/pets (listPets) [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  it('answers [] with no Link header when the catalogue is empty', async () => {
    const response = await t.request('GET', '/v1/pets');

    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('[]');
    expect(response.headers.link).toBeUndefined();
  });

  it('returns pets in ascending id order, 20 by default, with a Link to the next page', async () => {
    const created = [];
    for (let i = 0; i < 21; i++)
      created.push(await createPet(t, { name: `pet ${i}`, categoryId: 1 }));

    const response = await t.request('GET', '/v1/pets');

    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(created.slice(0, 20));
    expect(response.headers.link).toMatch(
      /^<\/v1\/pets\?limit=20&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    );
  });

  it('builds the next link from its own path, whatever Host and forwarding headers say', async () => {
    for (let i = 0; i < 2; i++) await createPet(t, { name: `pet ${i}`, categoryId: 1 });
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
    for (let i = 0; i < 3; i++) await createPet(t, { name: `pet ${i}`, categoryId: 1 });
    const response = await t.request('GET', '/v1/pets?limit=3');
    expect(response.json()).toHaveLength(3);
    expect(response.headers.link).toBeUndefined();
  });

  it('filters by status and keeps the filter in the next link', async () => {
    const statuses = ['available', 'sold', 'pending', 'sold', undefined, 'sold'] as const;
    const created = [];
    for (const status of statuses)
      created.push(await createPet(t, { name: 'p', categoryId: 1, ...(status && { status }) }));
    const sold = created.filter((pet) => pet.status === 'sold');

    const first = await t.request('GET', '/v1/pets?status=sold&limit=2');
    expect(first.json()).toEqual(sold.slice(0, 2));
    const next = first.headers.link as string;
    expect(next).toMatch(/^<\/v1\/pets\?limit=2&status=sold&cursor=[A-Za-z0-9_-]+>; rel="next"$/);

    const second = await t.request('GET', nextPage(next));
    expect(second.json()).toEqual(sold.slice(2));
    expect(second.headers.link).toBeUndefined();
  });

  it('walks every pet that existed at the start exactly once while pets are being added', async () => {
    const existing: number[] = [];
    for (let i = 0; i < 45; i++) {
      existing.push((await createPet(t, { name: `pet ${i}`, categoryId: (i % 3) + 1 })).id);
    }

    const seen: number[] = [];
    let url: string | undefined = '/v1/pets?limit=7';
    while (url) {
      const page = await t.request('GET', url);
      expect(page.statusCode).toBe(200);
      seen.push(...page.json().map((pet: { id: number }) => pet.id));
      await createPet(t, { name: 'added during the walk', categoryId: 9 });
      // Rows behind the cursor disappearing must not shift the next page (it would with OFFSET).
      await t.dataSource.query(`DELETE FROM pets WHERE id = ${seen[0]}`);
      url = page.headers.link ? nextPage(page.headers.link as string) : undefined;
    }

    expect(seen.filter((id) => existing.includes(id))).toEqual(existing);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it.each(['1', '100'])('accepts limit=%s', async (limit) => {
    for (let i = 0; i < 2; i++) await createPet(t, { name: 'p', categoryId: 1 });
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
