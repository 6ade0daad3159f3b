import type { Repository } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { apiKeyPrefix, hashApiKey } from '../../../src/auth/api-key.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The repository calls the store makes, over rows in memory; `save` numbers new rows. */
function fakeRepository(rows: ApiKeyEntity[] = []) {
  const repository = {
    create: vi.fn((fields: Partial<ApiKeyEntity>) => ({ ...fields }) as ApiKeyEntity),
    save: vi.fn((row: ApiKeyEntity) => {
      if (row.id === undefined)
        rows.push(Object.assign(row, { id: rows.length + 1, createdAt: new Date() }));
      return Promise.resolve(row);
    }),
    find: vi.fn(() => Promise.resolve([...rows])),
    findOneBy: vi.fn(({ id }: { id: number }) =>
      Promise.resolve(rows.find((row) => row.id === id) ?? null),
    ),
    exists: vi.fn(() => Promise.resolve(rows.length > 0)),
  };
  return { repository, store: new ApiKeyStore(repository as unknown as Repository<ApiKeyEntity>) };
}

const row = (fields: Partial<ApiKeyEntity>): ApiKeyEntity => ({
  id: 1,
  name: 'ci',
  prefix: '0123456789ab',
  keyHash: 'a'.repeat(64),
  scopes: 'pets:read,pets:write',
  createdAt: new Date(NOW - 86_400_000),
  expiresAt: null,
  lastUsedAt: null,
  lastDeprecatedCallAt: null,
  revokedAt: null,
  ...fields,
});

describe('ApiKeyStore.create', () => {
  it('stores the prefix and hash of a new key with every scope and no expiry, and returns the key once', async () => {
    const rows: ApiKeyEntity[] = [];
    const { store } = fakeRepository(rows);
    const { key, summary } = await store.create('storefront');

    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: 'storefront',
      prefix: apiKeyPrefix(key),
      keyHash: hashApiKey(key),
      scopes: 'pets:read,pets:write',
      expiresAt: null,
      revokedAt: null,
    });
    expect(summary).toEqual({
      id: 1,
      name: 'storefront',
      prefix: apiKeyPrefix(key),
      scopes: ['pets:read', 'pets:write'],
      createdAt: new Date(NOW),
      expiresAt: null,
      lastUsedAt: null,
      lastDeprecatedCallAt: null,
      revokedAt: null,
    });
    expect(JSON.stringify(summary)).not.toContain(hashApiKey(key));
  });

  it('stores the scopes asked for in their canonical order', async () => {
    const rows: ApiKeyEntity[] = [];
    const { store } = fakeRepository(rows);
    await store.create('reader', { scopes: ['pets:read'] });
    await store.create('both', { scopes: ['pets:write', 'pets:read'] });
    expect(rows.map((r) => r.scopes)).toEqual(['pets:read', 'pets:read,pets:write']);
  });

  it('sets the expiry whole days from now', async () => {
    const { store } = fakeRepository();
    const { summary } = await store.create('temporary', { expiresInDays: 30 });
    expect(summary.expiresAt).toEqual(new Date(NOW + 30 * 86_400_000));
  });

  it('accepts a name of 100 printable ASCII characters', async () => {
    const { store } = fakeRepository();
    await expect(store.create('~'.repeat(100))).resolves.toBeDefined();
  });

  it.each([
    ['an empty name', ''],
    ['a blank name', '   '],
    ['a name of 101 characters', 'a'.repeat(101)],
    ['a name with a control character', 'ci\n'],
    ['a name beyond ASCII', 'café'],
  ])('refuses %s and stores nothing', async (_label, name) => {
    const { repository, store } = fakeRepository();
    await expect(store.create(name)).rejects.toThrow(
      new RangeError('key name must be 1 to 100 printable ASCII characters'),
    );
    expect(repository.save).not.toHaveBeenCalled();
  });

  it('refuses an empty scope list and stores nothing', async () => {
    const { repository, store } = fakeRepository();
    await expect(store.create('nothing', { scopes: [] })).rejects.toThrow(RangeError);
    expect(repository.save).not.toHaveBeenCalled();
  });
});

describe('ApiKeyStore.list', () => {
  it('lists every key by id, as summaries without the hash', async () => {
    const { repository, store } = fakeRepository([
      row({ id: 1, scopes: 'pets:read' }),
      row({ id: 2, name: 'gone', revokedAt: new Date(NOW) }),
    ]);
    const keys = await store.list();
    expect(repository.find).toHaveBeenCalledWith({ order: { id: 'ASC' } });
    expect(keys.map(({ id, name, scopes, revokedAt }) => [id, name, scopes, revokedAt])).toEqual([
      [1, 'ci', ['pets:read'], null],
      [2, 'gone', ['pets:read', 'pets:write'], new Date(NOW)],
    ]);
    expect(keys[0]).not.toHaveProperty('keyHash');
  });
});

describe('ApiKeyStore.revoke', () => {
  it('answers undefined for an unknown id', async () => {
    const { repository, store } = fakeRepository([row({ id: 1 })]);
    expect(await store.revoke(2)).toBeUndefined();
    expect(repository.save).not.toHaveBeenCalled();
  });

  it('revokes an active key now', async () => {
    const rows = [row({ id: 1 })];
    const { repository, store } = fakeRepository(rows);
    expect((await store.revoke(1))?.revokedAt).toEqual(new Date(NOW));
    expect(repository.save).toHaveBeenCalledWith(rows[0]);
    expect(rows[0].revokedAt).toEqual(new Date(NOW));
  });

  it('leaves a revoked key as it was: revoking twice is harmless', async () => {
    const revokedAt = new Date(NOW - 60_000);
    const { repository, store } = fakeRepository([row({ id: 1, revokedAt })]);
    expect((await store.revoke(1))?.revokedAt).toEqual(revokedAt);
    expect(repository.save).not.toHaveBeenCalled();
  });
});

describe('ApiKeyStore.isEmpty', () => {
  it('is true only when no key exists at all, revoked ones included', async () => {
    expect(await fakeRepository().store.isEmpty()).toBe(true);
    expect(await fakeRepository([row({ revokedAt: new Date(NOW) })]).store.isEmpty()).toBe(false);
  });
});
