import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyEntity } from '../../src/auth/api-key.entity.js';
import { runApiKeyCli } from '../support/processes.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

/** The README's promise: expiry and revocation are honoured within this long. */
const HONOURED_MS = 5_000;

const forbidden = (scope: string) => ({
  code: 'FORBIDDEN',
  message: `This API key lacks the scope ${scope}`,
  status: 403,
});

describe.each(ENGINES)('API key scopes, expiry and last use [%s]', (engine) => {
  let t: TestApp;
  let readOnly: string;
  let writeOnly: string;
  beforeAll(async () => {
    t = await startTestApp(engine);
    const create = async (args: string[]) => {
      const created = await runApiKeyCli(['create', ...args], t.databaseUrl);
      expect(created).toMatchObject({ code: 0, stderr: '' });
      return created.stdout.trim();
    };
    readOnly = await create(['storefront', '--scopes', 'pets:read']);
    writeOnly = await create(['importer', '--scopes', 'pets:write']);
  });
  afterAll(() => t?.close());

  const petCount = async () =>
    Number((await t.dataSource.query('SELECT count(*) AS n FROM pets'))[0].n);

  it('a pets:read key lists and reads animals', async () => {
    const created = await t.request('POST', '/v1/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(created.statusCode).toBe(201);
    const list = await t.request('GET', '/v1/pets', { key: readOnly });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toContainEqual(created.json());
    const read = await t.request('GET', `/v1/pets/${created.json().id}`, { key: readOnly });
    expect(read).toMatchObject({ statusCode: 200 });
    expect(read.json()).toEqual(created.json());
  });

  it('a pets:read key cannot add an animal: 403 FORBIDDEN naming pets:write, nothing stored', async () => {
    const before = await petCount();
    const refused = await t.request('POST', '/v1/pets', {
      key: readOnly,
      body: { name: 'Intruder', categoryId: 1 },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.headers['www-authenticate']).toBeUndefined();
    expect(refused.json()).toEqual(forbidden('pets:write'));
    expect(await petCount()).toBe(before);
  });

  it('checks the scope before the body: an invalid body from a pets:read key is 403, not 400', async () => {
    const refused = await t.request('POST', '/v1/pets', { key: readOnly, body: { name: 42 } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(forbidden('pets:write'));
  });

  it('claims no Idempotency-Key on a 403: the same key then creates once with a write key', async () => {
    const before = await petCount();
    const headers = { 'idempotency-key': 'scoped-retry-1' };
    const body = { name: 'Once', categoryId: 2 };
    const refused = await t.request('POST', '/v1/pets', { key: readOnly, body, headers });
    expect(refused.statusCode).toBe(403);
    expect(await t.dataSource.query('SELECT key FROM idempotency_keys')).toEqual([]);

    const created = await t.request('POST', '/v1/pets', { key: writeOnly, body, headers });
    expect(created.statusCode).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect(await petCount()).toBe(before + 1);
  });

  it('a pets:write key adds animals but cannot list or read them: 403 naming pets:read', async () => {
    const created = await t.request('POST', '/v1/pets', {
      key: writeOnly,
      body: { name: 'Imported', categoryId: 3 },
    });
    expect(created.statusCode).toBe(201);
    for (const url of ['/v1/pets', `/v1/pets/${created.json().id}`]) {
      const refused = await t.request('GET', url, { key: writeOnly });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual(forbidden('pets:read'));
    }
  });

  it('a key created without --scopes has pets:read and pets:write, not webhooks:manage', async () => {
    const both = (await runApiKeyCli(['create', 'both'], t.databaseUrl)).stdout.trim();
    const created = await t.request('POST', '/v1/pets', {
      key: both,
      body: { name: 'Both', categoryId: 4 },
    });
    expect(created.statusCode).toBe(201);
    expect((await t.request('GET', '/v1/pets', { key: both })).statusCode).toBe(200);
    const webhooks = await t.request('GET', '/v1/webhooks', { key: both });
    expect(webhooks.statusCode).toBe(403);
    expect(webhooks.json()).toEqual(forbidden('webhooks:manage'));
  });

  it('a key created with --scopes webhooks:manage manages webhooks and nothing else', async () => {
    const hooks = (
      await runApiKeyCli(['create', 'hooks', '--scopes', 'webhooks:manage'], t.databaseUrl)
    ).stdout.trim();
    expect((await t.request('GET', '/v1/webhooks', { key: hooks })).statusCode).toBe(200);
    const pets = await t.request('GET', '/v1/pets', { key: hooks });
    expect(pets.statusCode).toBe(403);
    expect(pets.json()).toEqual(forbidden('pets:read'));
  });

  it('an expired key gets 401 like any invalid key within 5 s, and list shows it expired', async () => {
    const key = (
      await runApiKeyCli(['create', 'short-lived', '--expires-in', '1d'], t.databaseUrl)
    ).stdout.trim();
    expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);
    const prefix = key.split('_')[1];
    const active = (await runApiKeyCli(['list'], t.databaseUrl)).stdout;
    const expires = new RegExp(
      `^\\d+\\s+short-lived\\s+${prefix}\\s+\\S+\\s+\\S+Z\\s+(\\S+Z)\\s`,
      'm',
    );
    const expiresAt = Date.parse(expires.exec(active)![1]);
    expect(Math.abs(expiresAt - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    expect(active).toMatch(new RegExp(`${prefix}.*\\s+-\\s+active$`, 'm'));

    // The day passes: the expiry moves into the past in the database, not the clock.
    await t.dataSource
      .getRepository(ApiKeyEntity)
      .update({ prefix }, { expiresAt: new Date(Date.now() - 1_000) });
    const movedAt = Date.now();
    let response = await t.request('GET', '/v1/pets', { key });
    while (response.statusCode === 200 && Date.now() - movedAt < HONOURED_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await t.request('GET', '/v1/pets', { key });
    }
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
    expect(response.json()).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Invalid API key',
      status: 401,
    });
    expect((await runApiKeyCli(['list'], t.databaseUrl)).stdout).toMatch(
      new RegExp(`${prefix}.*\\s+-\\s+expired$`, 'm'),
    );
  });

  it('list shows when a key was last used, written at most once a minute per instance', async () => {
    const key = (await runApiKeyCli(['create', 'tracked'], t.databaseUrl)).stdout.trim();
    const prefix = key.split('_')[1];
    const lastUsed = async () =>
      (await t.dataSource.getRepository(ApiKeyEntity).findOneByOrFail({ prefix })).lastUsedAt;
    expect(await lastUsed()).toBeNull();
    expect((await runApiKeyCli(['list'], t.databaseUrl)).stdout).toMatch(
      new RegExp(`${prefix}\\s+\\S+\\s+\\S+Z\\s+never\\s+-\\s+-\\s+-\\s+active$`, 'm'),
    );

    const before = Date.now();
    expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);
    // Written after the answer, not before it.
    let first = await lastUsed();
    while (first === null && Date.now() - before < 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      first = await lastUsed();
    }
    expect(first!.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(first!.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);

    // Past the 2 s verification cache too: later requests within the minute write nothing.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    for (let i = 0; i < 5; i++) {
      expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);
    }
    expect(await lastUsed()).toEqual(first);
    expect((await runApiKeyCli(['list'], t.databaseUrl)).stdout).toMatch(
      new RegExp(
        `${prefix}\\s+\\S+\\s+\\S+Z\\s+never\\s+${first!.toISOString()}\\s+-\\s+-\\s+active$`,
        'm',
      ),
    );
  });
});
