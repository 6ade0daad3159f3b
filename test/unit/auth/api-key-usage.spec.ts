import { Logger } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import { ApiKeyUsage } from '../../../src/auth/api-key-usage.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function usageWith(
  update = vi.fn((_where: { id: number }, _set: object): Promise<unknown> => Promise.resolve()),
) {
  const usage = new ApiKeyUsage({ update } as unknown as Repository<ApiKeyEntity>);
  return { usage, update };
}

describe('ApiKeyUsage', () => {
  it('writes a key last use at most once a minute', () => {
    const { usage, update } = usageWith();
    usage.recordUse(1);
    expect(update).toHaveBeenCalledExactlyOnceWith({ id: 1 }, { lastUsedAt: new Date(NOW) });

    vi.advanceTimersByTime(59_999);
    usage.recordUse(1);
    expect(update).toHaveBeenCalledTimes(1);

    vi.advanceTimersByTime(1);
    usage.recordUse(1);
    expect(update).toHaveBeenCalledTimes(2);
    expect(update).toHaveBeenLastCalledWith({ id: 1 }, { lastUsedAt: new Date(NOW + 60_000) });
  });

  it('takes the time of use it is given', () => {
    const { usage, update } = usageWith();
    usage.recordUse(1, NOW - 5);
    expect(update).toHaveBeenCalledWith({ id: 1 }, { lastUsedAt: new Date(NOW - 5) });
  });

  it('counts the minute per key', () => {
    const { usage, update } = usageWith();
    usage.recordUse(1);
    usage.recordUse(2);
    expect(update.mock.calls.map(([where]) => where)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('writes deprecated calls on their own column and minute', () => {
    const { usage, update } = usageWith();
    usage.recordUse(1);
    usage.recordDeprecatedCall(1);
    usage.recordDeprecatedCall(1);
    expect(update.mock.calls).toEqual([
      [{ id: 1 }, { lastUsedAt: new Date(NOW) }],
      [{ id: 1 }, { lastDeprecatedCallAt: new Date(NOW) }],
    ]);
    vi.advanceTimersByTime(60_000);
    usage.recordDeprecatedCall(1);
    expect(update).toHaveBeenLastCalledWith(
      { id: 1 },
      { lastDeprecatedCallAt: new Date(NOW + 60_000) },
    );
  });

  it('does not wait for the write', () => {
    const { usage } = usageWith(vi.fn(() => new Promise(() => {})));
    expect(usage.recordUse(1)).toBeUndefined();
  });

  it('logs a failed write and retries only in the next minute', async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    const { usage, update } = usageWith(vi.fn(() => Promise.reject(new Error('database down'))));
    usage.recordUse(1);
    await vi.waitFor(() =>
      expect(warn).toHaveBeenCalledWith('lastUsedAt of key 1 not recorded: database down'),
    );
    usage.recordUse(1);
    expect(update).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60_000);
    usage.recordUse(1);
    expect(update).toHaveBeenCalledTimes(2);
  });

  it('remembers the last 10,000 keys: the least recently written one is written again', () => {
    const { usage, update } = usageWith();
    for (let id = 0; id <= 10_000; id++) usage.recordUse(id);
    usage.recordUse(10_000);
    expect(update).toHaveBeenCalledTimes(10_001);
    usage.recordUse(0);
    expect(update).toHaveBeenCalledTimes(10_002);
  });
});
