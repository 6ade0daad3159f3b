import { Logger } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { ApiKeyUsage } from '../../../src/auth/api-key-usage.js';
import type { Row } from '../../../src/database/sql-runner.js';
import { ENGINES } from '../../support/test-database.js';
import { type KeyDatabase, openKeyDatabase } from './key-database.js';

const NOW = Date.parse('2026-11-23T12:00:00.123Z');

describe.each(ENGINES)('ApiKeyUsage [%s]', (engine) => {
  let keys: KeyDatabase;
  let store: ApiKeyStore;
  let ids: number[];
  beforeAll(async () => {
    keys = await openKeyDatabase(engine);
    store = new ApiKeyStore(keys.db);
    ids = [(await store.create('first')).summary.id, (await store.create('second')).summary.id];
  });
  afterAll(() => keys?.close());
  // Not fake timers: TypeORM's driver knows a date by the real Date class.
  beforeEach(() => {
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A fresh ApiKeyUsage, and its writes. */
  function usageWith() {
    const write = vi.spyOn(keys.db, 'write');
    const usage = new ApiKeyUsage(keys.db);
    /** The UPDATEs it issued, each a promise settled once it ran. */
    const updates = () =>
      write.mock.calls.flatMap(([sql], i) =>
        sql.startsWith('UPDATE') ? [write.mock.results[i].value as Promise<Row[]>] : [],
      );
    return { usage, write, updates };
  }

  /** The usage columns of every key, once the updates so far ran, as `apikey list` reads them. */
  async function written(updates: () => Promise<Row[]>[]) {
    await Promise.all(updates());
    return (await store.list()).map(({ id, lastUsedAt, lastDeprecatedCallAt }) => ({
      id,
      lastUsedAt,
      lastDeprecatedCallAt,
    }));
  }

  it('writes a key last use at most once a minute', async () => {
    const [id, other] = ids;
    const { usage, updates } = usageWith();
    usage.recordUse(id);
    expect(updates()).toHaveLength(1);
    expect(await written(updates)).toEqual([
      { id, lastUsedAt: new Date(NOW), lastDeprecatedCallAt: null },
      { id: other, lastUsedAt: null, lastDeprecatedCallAt: null },
    ]);

    usage.recordUse(id, NOW + 59_999);
    expect(updates()).toHaveLength(1);

    usage.recordUse(id, NOW + 60_000);
    expect(updates()).toHaveLength(2);
    expect((await written(updates))[0].lastUsedAt).toEqual(new Date(NOW + 60_000));
  });

  it('writes the time of use it is given, read back to the millisecond', async () => {
    const { usage, updates } = usageWith();
    usage.recordUse(ids[0], Date.parse('2027-06-30T23:59:59.999Z'));
    expect((await written(updates))[0].lastUsedAt).toEqual(new Date('2027-06-30T23:59:59.999Z'));
  });

  it('counts the minute per key', async () => {
    const { usage, updates } = usageWith();
    usage.recordUse(ids[0], NOW + 120_000);
    usage.recordUse(ids[1], NOW + 120_000);
    expect((await written(updates)).map(({ lastUsedAt }) => lastUsedAt)).toEqual([
      new Date(NOW + 120_000),
      new Date(NOW + 120_000),
    ]);
  });

  it('writes deprecated calls on their own column and minute', async () => {
    const [id] = ids;
    const { usage, updates } = usageWith();
    usage.recordUse(id, NOW + 180_000);
    usage.recordDeprecatedCall(id);
    usage.recordDeprecatedCall(id);
    expect(updates()).toHaveLength(2);
    expect((await written(updates))[0]).toEqual({
      id,
      lastUsedAt: new Date(NOW + 180_000),
      lastDeprecatedCallAt: new Date(NOW),
    });

    vi.mocked(Date.now).mockReturnValue(NOW + 60_000);
    usage.recordDeprecatedCall(id);
    expect(updates()).toHaveLength(3);
    expect((await written(updates))[0].lastDeprecatedCallAt).toEqual(new Date(NOW + 60_000));
  });

  it('does not wait for the write', () => {
    const { usage, write, updates } = usageWith();
    write.mockReturnValue(new Promise(() => {}));
    expect(usage.recordUse(ids[0])).toBeUndefined();
    expect(updates()).toHaveLength(1);
  });

  it('logs a failed write and retries only in the next minute', async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    const { usage, write, updates } = usageWith();
    write.mockRejectedValue(new Error('database down'));
    usage.recordUse(ids[0]);
    await vi.waitFor(() =>
      expect(warn).toHaveBeenCalledWith(`lastUsedAt of key ${ids[0]} not recorded: database down`),
    );
    usage.recordUse(ids[0], NOW + 59_999);
    expect(updates()).toHaveLength(1);
    usage.recordUse(ids[0], NOW + 60_000);
    expect(updates()).toHaveLength(2);
  });

  it('remembers the last 10,000 keys: the least recently written one is written again', () => {
    const { usage, write, updates } = usageWith();
    write.mockResolvedValue([]);
    for (let id = 0; id <= 10_000; id++) usage.recordUse(id);
    usage.recordUse(10_000);
    expect(updates()).toHaveLength(10_001);
    usage.recordUse(0);
    expect(updates()).toHaveLength(10_002);
  });
});
