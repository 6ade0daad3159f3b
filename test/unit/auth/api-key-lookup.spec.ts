import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiKeyLookup } from '../../../src/auth/api-key-lookup.js';
import { ApiKeyStore, type ApiKeySummary } from '../../../src/auth/api-key-store.js';
import { hashApiKey } from '../../../src/auth/api-key.js';
import type { Row } from '../../../src/database/sql-runner.js';
import { ENGINES } from '../../support/test-database.js';
import { type KeyDatabase, openKeyDatabase } from './key-database.js';

describe.each(ENGINES)('ApiKeyLookup [%s]', (engine) => {
  let keys: KeyDatabase;
  /** Three keys, the last one revoked, with their keys in the clear. */
  let stored: { key: string; summary: ApiKeySummary }[];
  beforeAll(async () => {
    keys = await openKeyDatabase(engine);
    const store = new ApiKeyStore(keys.db);
    stored = [await store.create('first'), await store.create('second'), await store.create('old')];
    stored[2].summary = (await store.revoke(stored[2].summary.id))!;
  });
  afterAll(() => keys?.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A fresh lookup, and the reads it asks of the runner. */
  function lookupWith() {
    return { lookup: new ApiKeyLookup(keys.db), read: vi.spyOn(keys.db, 'read') };
  }

  /** The stored key as the lookup returns it, from the store's summary of it. */
  const entityOf = ({ key, summary: { scopes, ...fields } }: (typeof stored)[number]) => ({
    ...fields,
    keyHash: hashApiKey(key),
    scopes: scopes.join(','),
  });

  describe('byPrefix', () => {
    it('finds the key by its prefix, every column read as stored', async () => {
      const { lookup } = lookupWith();
      expect(await lookup.byPrefix(stored[2].summary.prefix)).toEqual(entityOf(stored[2]));
      expect(await lookup.byPrefix('ffffffffffff')).toBeNull();
    });

    it('asks SqlRunner.read, which answers on the read node when there is one', async () => {
      const { lookup, read } = lookupWith();
      await lookup.byPrefix(stored[0].summary.prefix);
      expect(read).toHaveBeenCalledExactlyOnceWith(expect.any(String), [stored[0].summary.prefix]);
    });

    it('shares one query among the lookups of a prefix in flight, not across prefixes', async () => {
      const run = keys.db.read.bind(keys.db);
      const { lookup, read } = lookupWith();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      read.mockImplementation(async (sql: string, params: unknown[]): Promise<Row[]> => {
        await held;
        return run(sql, params);
      });

      const first = lookup.byPrefix(stored[0].summary.prefix);
      const second = lookup.byPrefix(stored[0].summary.prefix);
      const other = lookup.byPrefix(stored[1].summary.prefix);
      expect(read.mock.calls.map(([, params]) => params)).toEqual([
        [stored[0].summary.prefix],
        [stored[1].summary.prefix],
      ]);
      release();

      expect(await first).toEqual(entityOf(stored[0]));
      expect(await second).toBe(await first);
      expect(await other).toEqual(entityOf(stored[1]));
    });

    it('queries again once the lookup in flight has settled, failed or not', async () => {
      const { lookup, read } = lookupWith();
      read.mockRejectedValueOnce(new Error('connection lost'));
      const { prefix } = stored[0].summary;

      await expect(lookup.byPrefix(prefix)).rejects.toThrow('connection lost');
      expect(await lookup.byPrefix(prefix)).toEqual(entityOf(stored[0]));
      expect(await lookup.byPrefix(prefix)).toEqual(entityOf(stored[0]));
      expect(read).toHaveBeenCalledTimes(3);
    });
  });

  describe('byIds', () => {
    it('finds the keys with given ids that exist, in one read', async () => {
      const { lookup, read } = lookupWith();
      const [first, , old] = stored;
      const found = await lookup.byIds([old.summary.id, 999_999, first.summary.id]);
      expect(found.sort((a, b) => a.id - b.id)).toEqual([entityOf(first), entityOf(old)]);
      expect(read).toHaveBeenCalledTimes(1);
    });

    it('answers every count of ids with a few statement texts', async () => {
      const { lookup, read } = lookupWith();
      const ids = stored.map(({ summary }) => summary.id);
      for (let count = 1; count <= 9; count++) {
        const asked = Array.from({ length: count }, (_, i) => (i < 3 ? ids[i] : 1_000 + i));
        const found = (await lookup.byIds(asked)).map(({ id }) => id).sort((a, b) => a - b);
        expect(found, `${count} ids`).toEqual(ids.slice(0, count));
      }
      // Padded to 1, 2, 4, 8 and 16 ids.
      expect(new Set(read.mock.calls.map(([sql]) => sql)).size).toBe(5);
    });

    it('asks nothing for no ids', async () => {
      const { lookup, read } = lookupWith();
      expect(await lookup.byIds([])).toEqual([]);
      expect(read).not.toHaveBeenCalled();
    });
  });
});
