import { In, type DataSource } from 'typeorm';
import { describe, expect, it, vi } from 'vitest';
import { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import { ApiKeyLookup } from '../../../src/auth/api-key-lookup.js';

/** A query the test settles by hand. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The data source surface onReadNode uses: its options, and query runners by mode. */
function fakeDataSource(
  findOneBy: (entity: unknown, where: { prefix: string }) => Promise<unknown>,
  options: object = { type: 'sqlite' },
  findBy: (entity: unknown, where: object) => Promise<unknown> = () => Promise.resolve([]),
) {
  const createQueryRunner = vi.fn(() => ({
    manager: { findOneBy, findBy },
    release: () => Promise.resolve(),
  }));
  return {
    dataSource: { options, createQueryRunner } as unknown as DataSource,
    createQueryRunner,
  };
}

const stored = { id: 1, prefix: '0123456789ab' } as ApiKeyEntity;

describe('ApiKeyLookup', () => {
  it('finds the key by its prefix', async () => {
    const findOneBy = vi.fn(() => Promise.resolve(stored));
    const lookup = new ApiKeyLookup(fakeDataSource(findOneBy).dataSource);
    expect(await lookup.byPrefix('0123456789ab')).toBe(stored);
    expect(findOneBy).toHaveBeenCalledWith(ApiKeyEntity, { prefix: '0123456789ab' });
  });

  it('reads on the read node when there is one', async () => {
    const { dataSource, createQueryRunner } = fakeDataSource(() => Promise.resolve(null), {
      type: 'postgres',
      replication: {},
    });
    expect(await new ApiKeyLookup(dataSource).byPrefix('0123456789ab')).toBeNull();
    expect(createQueryRunner).toHaveBeenCalledExactlyOnceWith('slave');
  });

  it('shares one query among the lookups of a prefix in flight, not across prefixes', async () => {
    const query = pending<ApiKeyEntity | null>();
    const findOneBy = vi.fn((_entity: unknown, _where: { prefix: string }) => query.promise);
    const lookup = new ApiKeyLookup(fakeDataSource(findOneBy).dataSource);

    const first = lookup.byPrefix('0123456789ab');
    const second = lookup.byPrefix('0123456789ab');
    void lookup.byPrefix('ba9876543210');
    await vi.waitFor(() => expect(findOneBy).toHaveBeenCalledTimes(2));
    query.resolve(stored);

    expect(await first).toBe(stored);
    expect(await second).toBe(stored);
    expect(findOneBy.mock.calls.map(([, where]) => where)).toEqual([
      { prefix: '0123456789ab' },
      { prefix: 'ba9876543210' },
    ]);
  });

  it('queries again once the lookup in flight has settled, failed or not', async () => {
    const findOneBy = vi
      .fn<() => Promise<ApiKeyEntity | null>>()
      .mockRejectedValueOnce(new Error('connection lost'))
      .mockResolvedValue(stored);
    const lookup = new ApiKeyLookup(fakeDataSource(findOneBy).dataSource);

    await expect(lookup.byPrefix('0123456789ab')).rejects.toThrow('connection lost');
    expect(await lookup.byPrefix('0123456789ab')).toBe(stored);
    expect(await lookup.byPrefix('0123456789ab')).toBe(stored);
    expect(findOneBy).toHaveBeenCalledTimes(3);
  });

  it('finds the keys with given ids in one query, on the read node when there is one', async () => {
    const findBy = vi.fn(() => Promise.resolve([stored]));
    const { dataSource, createQueryRunner } = fakeDataSource(
      () => Promise.resolve(null),
      { type: 'postgres', replication: {} },
      findBy,
    );
    expect(await new ApiKeyLookup(dataSource).byIds([1, 2])).toEqual([stored]);
    expect(findBy).toHaveBeenCalledExactlyOnceWith(ApiKeyEntity, { id: In([1, 2]) });
    expect(createQueryRunner).toHaveBeenCalledExactlyOnceWith('slave');
  });
});
