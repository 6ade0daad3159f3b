import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPet, type Pet } from '../../support/pets-api.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../../support/processes.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  createTestDatabase,
  ENGINES,
  type Engine,
  type TestDatabase,
} from '../../support/test-database.js';

const WEAK_ETAG = /^W\/"[A-Za-z0-9_-]{27}"$/;
const CACHEABLE = 'private, no-cache';

/**
 * Conditional GETs on listPets and getPet (docs/api-design.md, "Conditional requests"): a weak
 * ETag on every 200, a 304 without a body, with the 200's caching headers, when If-None-Match
 * matches, and a new ETag as soon as the answer would change.
 */
describe.each(ENGINES)('conditional GETs [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.dataSource.query('DELETE FROM pets'));

  const get = (url: string, ifNoneMatch?: string, method: 'GET' | 'HEAD' = 'GET') =>
    t.request(method, url, {
      headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
    });

  it('listPets: a 200 has a weak ETag and private, no-cache; the same page again has the same ETag', async () => {
    await createPet(t, { name: 'Rex', categoryId: 1 });

    const first = await get('/v1/pets');
    const again = await get('/v1/pets');

    expect(first.statusCode).toBe(200);
    expect(first.headers.etag).toMatch(WEAK_ETAG);
    expect(first.headers['cache-control']).toBe(CACHEABLE);
    expect(again.headers.etag).toBe(first.headers.etag);
  });

  it('listPets: a matching If-None-Match gets 304 with no body and the 200 headers but Content-Type', async () => {
    for (let i = 0; i < 3; i++) await createPet(t, { name: `pet ${i}`, categoryId: 1 });
    const page = await get('/v1/pets?limit=2');

    const notModified = await get('/v1/pets?limit=2', String(page.headers.etag));

    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers).toMatchObject({
      etag: page.headers.etag,
      'cache-control': CACHEABLE,
      link: page.headers.link,
      'x-content-type-options': 'nosniff',
      'ratelimit-limit': '600',
    });
    expect(notModified.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(notModified.headers['content-type']).toBeUndefined();
    expect(notModified.headers.vary).toBeUndefined();
  });

  it('listPets: every If-None-Match form that names the ETag matches (RFC 9110 weak comparison)', async () => {
    await createPet(t, { name: 'Rex', categoryId: 1 });
    const etag = String((await get('/v1/pets')).headers.etag);
    const strong = etag.slice(2);

    for (const header of [
      etag,
      strong,
      '*',
      ` ${etag} `,
      `"other", ${etag}`,
      `W/"other",${strong}`,
      `, ,${etag},`,
    ])
      expect((await get('/v1/pets', header)).statusCode, header).toBe(304);
    for (const header of [
      'W/"other"',
      '"other", W/"more"',
      etag.toLowerCase(),
      `w/${strong}`,
      'garbage',
      `${etag} x`,
      `*, ${etag}`,
      '',
    ])
      expect((await get('/v1/pets', header)).statusCode, header).toBe(200);
  });

  it('listPets: a page that gained a pet has a new ETag, and the old one gets the new page', async () => {
    await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const before = await get('/v1/pets?status=available');
    const added = await createPet(t, { name: 'Bella', categoryId: 2, status: 'available' });

    const after = await get('/v1/pets?status=available', String(before.headers.etag));

    expect(after.statusCode).toBe(200);
    expect(after.json<Pet[]>().map((pet) => pet.name)).toEqual(['Rex', added.name]);
    expect(after.headers.etag).toMatch(WEAK_ETAG);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect((await get('/v1/pets?status=available', String(after.headers.etag))).statusCode).toBe(
      304,
    );
  });

  it('listPets: a full page whose body stays the same but now links to a next page has a new ETag', async () => {
    await createPet(t, { name: 'Rex', categoryId: 1 });
    const before = await get('/v1/pets?limit=1');
    await createPet(t, { name: 'Bella', categoryId: 1 });

    const after = await get('/v1/pets?limit=1', String(before.headers.etag));

    expect(after.statusCode).toBe(200);
    expect(after.body).toBe(before.body);
    expect(before.headers.link).toBeUndefined();
    expect(after.headers.link).toMatch(/; rel="next"$/);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('getPet: the strong ETag of the pet; a 304 keeps the deprecation headers', async () => {
    const rex = await createPet(t, { name: 'Rex', categoryId: 1 });
    const bella = await createPet(t, { name: 'Bella', categoryId: 1 });
    const first = await get(`/v1/pets/${rex.id}`);
    const other = await get(`/v1/pets/${bella.id}`);

    const notModified = await get(`/v1/pets/${rex.id}`, String(first.headers.etag));
    const otherTag = await get(`/v1/pets/${rex.id}`, String(other.headers.etag));

    expect(first.headers.etag).toBe(`"${rex.id}-1"`);
    expect(first.headers['cache-control']).toBe(CACHEABLE);
    expect(other.headers.etag).not.toBe(first.headers.etag);
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers).toMatchObject({
      etag: first.headers.etag,
      'cache-control': CACHEABLE,
      deprecation: '@1795219200',
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '</v1/pets>; rel="successor-version"',
    });
    expect(notModified.headers['content-type']).toBeUndefined();
    expect(otherTag.statusCode).toBe(200);
    expect(otherTag.json()).toEqual(rex);
  });

  it('HEAD has the ETag of GET and answers 304 to it too', async () => {
    const rex = await createPet(t, { name: 'Rex', categoryId: 1 });
    for (const url of ['/v1/pets', `/v1/pets/${rex.id}`]) {
      const got = await get(url);
      const head = await get(url, undefined, 'HEAD');
      const conditional = await get(url, String(got.headers.etag), 'HEAD');

      expect(head.statusCode).toBe(200);
      expect(head.headers.etag).toBe(got.headers.etag);
      expect(conditional.statusCode).toBe(304);
      expect(conditional.body).toBe('');
    }
  });

  it('errors carry no ETag, stay no-store, and ignore If-None-Match; a create has its ETag and stays no-store', async () => {
    const answers = [
      await get('/v1/pets/999', '*'),
      await get('/v1/pets/abc', '*'),
      await get('/v1/pets?limit=0', '*'),
      await t.request('GET', '/v1/pets', { key: null, headers: { 'if-none-match': '*' } }),
      await t.request('POST', '/v1/pets', {
        body: { name: 'Rex', categoryId: 1 },
        headers: { 'if-none-match': '*' },
      }),
    ];

    expect(answers.map((answer) => answer.statusCode)).toEqual([404, 400, 400, 401, 201]);
    const created = answers.pop()!;
    for (const answer of answers) {
      expect(answer.headers.etag).toBeUndefined();
      expect(answer.headers['cache-control']).toBe('no-store');
    }
    expect(created.headers.etag).toBe(`"${created.json().id}-1"`);
    expect(created.headers['cache-control']).toBe('no-store');
  });
});

/**
 * The ETag is a function of the answer alone: two server processes on one database give the same
 * ETags, and so do SQLite and PostgreSQL for the same pets.
 */
describe('ETags across instances and engines', () => {
  const etagsByEngine = new Map<Engine, string[]>();

  describe.each(ENGINES)('two server processes on one database [%s]', (engine) => {
    let database: TestDatabase;
    let servers: ServerProcess[];
    let key: string;

    beforeAll(async () => {
      database = await createTestDatabase(engine);
      const env = { NODE_ENV: 'production', DATABASE_URL: database.url };
      servers = [await startServer(env), await startServer(env)];
      key = (await runApiKeyCli(['create', 'etag'], database.url)).stdout.trim();
    });
    afterAll(async () => {
      for (const server of servers ?? []) server.child.kill('SIGKILL');
      await database?.drop();
    });

    const fetchFrom = (server: ServerProcess, path: string, ifNoneMatch?: string) =>
      fetch(`${server.baseUrl}${path}`, {
        headers: {
          authorization: `Bearer ${key}`,
          ...(ifNoneMatch !== undefined && { 'if-none-match': ifNoneMatch }),
        },
      });

    it("answers the same ETags from both, and each honours the other one's", async () => {
      for (const [i, status] of ['available', 'sold', undefined].entries()) {
        const created = await fetch(`${servers[0].baseUrl}/v1/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `pet ${i}`, categoryId: i + 1, ...(status && { status }) }),
        });
        expect(created.status).toBe(201);
      }
      const paths = [
        '/v1/pets',
        '/v1/pets?limit=2',
        '/v1/pets?status=sold',
        '/v1/pets/1',
        '/v1/pets/3',
      ];
      const etags: string[][] = [];
      for (const server of servers) {
        const answers = await Promise.all(paths.map((path) => fetchFrom(server, path)));
        expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
        etags.push(answers.map((answer) => answer.headers.get('etag')!));
      }

      expect(etags[1]).toEqual(etags[0]);
      expect(new Set(etags[0]).size).toBe(paths.length);
      for (const [i, path] of paths.entries()) {
        const answer = await fetchFrom(servers[1], path, etags[0][i]);
        expect(answer.status).toBe(304);
        expect(await answer.text()).toBe('');
      }
      etagsByEngine.set(engine, etags[0]);
    });
  });

  it.runIf(ENGINES.length > 1)(
    'gives the same pets the same ETags on SQLite and PostgreSQL',
    () => {
      expect(etagsByEngine.get('postgres')).toEqual(etagsByEngine.get('sqlite'));
      expect(etagsByEngine.get('sqlite')).toHaveLength(5);
    },
  );
});
