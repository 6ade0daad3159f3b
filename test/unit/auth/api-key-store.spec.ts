import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { apiKeyPrefix, hashApiKey } from '../../../src/auth/api-key.js';
import type { Row } from '../../../src/database/sql-runner.js';
import { ENGINES } from '../../support/test-database.js';
import { type KeyDatabase, openKeyDatabase } from './key-database.js';

const NOW = Date.parse('2026-11-23T12:00:00.123Z');
const DAY_MS = 86_400_000;

/** The stored row, as the database has it. */
async function storedRow(keys: KeyDatabase, id: number): Promise<Row | undefined> {
  const byId = keys.db.statement<{ id: number }>('SELECT * FROM api_keys WHERE id = :id');
  return (await keys.db.write(byId.text, byId.values({ id })))[0];
}

describe.each(ENGINES)('ApiKeyStore [%s]', (engine) => {
  let keys: KeyDatabase;
  let store: ApiKeyStore;
  beforeAll(async () => {
    keys = await openKeyDatabase(engine);
    store = new ApiKeyStore(keys.db);
  });
  afterAll(() => keys?.close());
  beforeEach(() => keys.db.write('DELETE FROM api_keys', []));
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const stored = (id: number) => storedRow(keys, id);

  describe('create', () => {
    it('stores the prefix and hash of a new key with every scope and no expiry, and returns the key once', async () => {
      const before = Date.now();
      const { key, summary } = await store.create('storefront');

      expect(await stored(summary.id)).toMatchObject({
        name: 'storefront',
        prefix: apiKeyPrefix(key),
        key_hash: hashApiKey(key),
        scopes: 'pets:read,pets:write,orders:write',
        expires_at: null,
        last_used_at: null,
        last_deprecated_call_at: null,
        revoked_at: null,
      });
      expect(summary).toEqual({
        id: summary.id,
        name: 'storefront',
        prefix: apiKeyPrefix(key),
        scopes: ['pets:read', 'pets:write', 'orders:write'],
        createdAt: expect.any(Date),
        expiresAt: null,
        lastUsedAt: null,
        lastDeprecatedCallAt: null,
        revokedAt: null,
      });
      // The database's clock, in UTC (SQLite's datetime('now') has whole seconds).
      expect(summary.createdAt.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(summary.createdAt.getTime()).toBeLessThanOrEqual(Date.now());
      expect(JSON.stringify(summary)).not.toContain(hashApiKey(key));
    });

    it('stores the scopes asked for in their canonical order', async () => {
      const reader = await store.create('reader', { scopes: ['pets:read'] });
      const both = await store.create('both', { scopes: ['pets:write', 'pets:read'] });
      expect((await stored(reader.summary.id))?.scopes).toBe('pets:read');
      expect((await stored(both.summary.id))?.scopes).toBe('pets:read,pets:write');
    });

    it('sets the expiry whole days from now, to the millisecond', async () => {
      // Not fake timers: TypeORM's driver knows a date by the real Date class.
      vi.spyOn(Date, 'now').mockReturnValue(NOW);
      const { summary } = await store.create('temporary', { expiresInDays: 30 });
      expect(summary.expiresAt).toEqual(new Date(NOW + 30 * DAY_MS));
      expect((await store.list())[0].expiresAt).toEqual(new Date(NOW + 30 * DAY_MS));
    });

    it('accepts a name of 100 printable ASCII characters', async () => {
      const { summary } = await store.create('~'.repeat(100));
      expect(summary.name).toBe('~'.repeat(100));
    });

    it.each([
      ['an empty name', ''],
      ['a blank name', '   '],
      ['a name of 101 characters', 'a'.repeat(101)],
      ['a name with a control character', 'ci\n'],
      ['a name beyond ASCII', 'café'],
    ])('refuses %s and stores nothing', async (_label, name) => {
      const write = vi.spyOn(keys.db, 'write');
      await expect(store.create(name)).rejects.toThrow(
        new RangeError('key name must be 1 to 100 printable ASCII characters'),
      );
      expect(write).not.toHaveBeenCalled();
    });

    it('refuses an empty scope list and stores nothing', async () => {
      const write = vi.spyOn(keys.db, 'write');
      await expect(store.create('nothing', { scopes: [] })).rejects.toThrow(RangeError);
      expect(write).not.toHaveBeenCalled();
    });
  });

  describe('list', () => {
    it('lists every key by id, as summaries without the hash', async () => {
      const first = await store.create('ci', { scopes: ['pets:read'] });
      const second = await store.create('gone');
      const revoked = await store.revoke(second.summary.id);

      const listed = await store.list();
      expect(
        listed.map(({ id, name, scopes, revokedAt }) => [id, name, scopes, revokedAt]),
      ).toEqual([
        [first.summary.id, 'ci', ['pets:read'], null],
        [
          second.summary.id,
          'gone',
          ['pets:read', 'pets:write', 'orders:write'],
          revoked?.revokedAt,
        ],
      ]);
      expect(listed[0]).toEqual(first.summary);
      expect(listed[0]).not.toHaveProperty('keyHash');
    });
  });

  describe('revoke', () => {
    it('answers undefined for an unknown id and changes nothing', async () => {
      const { summary } = await store.create('ci');
      expect(await store.revoke(summary.id + 1)).toBeUndefined();
      expect(await store.list()).toEqual([summary]);
    });

    it('revokes an active key now', async () => {
      const { summary } = await store.create('ci');
      const before = Date.now();
      const revoked = await store.revoke(summary.id);
      expect(revoked).toEqual({ ...summary, revokedAt: expect.any(Date) });
      expect(revoked!.revokedAt!.getTime()).toBeGreaterThanOrEqual(before);
      expect(revoked!.revokedAt!.getTime()).toBeLessThanOrEqual(Date.now());
      expect(await store.list()).toEqual([revoked]);
    });

    it('keeps the first revocation time: revoking twice is harmless', async () => {
      const { summary } = await store.create('ci');
      const first = await store.revoke(summary.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.revoke(summary.id)).toEqual(first);
      expect(await store.list()).toEqual([first]);
    });
  });

  describe('isEmpty', () => {
    it('is true only when no key exists at all, revoked ones included', async () => {
      expect(await store.isEmpty()).toBe(true);
      await store.revoke((await store.create('ci')).summary.id);
      expect(await store.isEmpty()).toBe(false);
    });
  });
});

// SQLite stores dates as text, in the format TypeORM wrote them in; PostgreSQL as timestamptz.
describe('ApiKeyStore on SQLite: dates', () => {
  let keys: KeyDatabase;
  let store: ApiKeyStore;
  beforeAll(async () => {
    keys = await openKeyDatabase('sqlite');
    store = new ApiKeyStore(keys.db);
  });
  afterAll(() => keys?.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("stores dates as TypeORM did, UTC text; reads its rows, datetime('now')'s included, as UTC", async () => {
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
    const { summary } = await store.create('ci', { expiresInDays: 1 });
    expect((await storedRow(keys, summary.id))?.expires_at).toBe('2026-11-24 12:00:00.123');

    await keys.db.write(
      `INSERT INTO api_keys (name, prefix, key_hash, created_at, expires_at)
      VALUES ('old', 'aaaaaaaaaaaa', 'hash', '2026-11-26 10:00:00', '2026-12-01 08:30:00.250')`,
      [],
    );
    const old = (await store.list()).find(({ name }) => name === 'old');
    expect(old?.createdAt).toEqual(new Date('2026-11-26T10:00:00.000Z'));
    expect(old?.expiresAt).toEqual(new Date('2026-12-01T08:30:00.250Z'));
  });
});
