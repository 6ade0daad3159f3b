import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { InProcessFailureCounters } from '../../../src/auth/auth-failure-counters.js';
import { AuthFailureLimiter } from '../../../src/auth/auth-failure-limiter.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('InProcessFailureCounters', () => {
  it('counts failures per address in a window that starts with the first one', async () => {
    const counters = new InProcessFailureCounters();
    expect(await counters.read('a')).toEqual({ failures: 0, windowLeftMs: 60_000 });
    expect(await counters.add('a')).toEqual({ failures: 1, windowLeftMs: 60_000 });
    vi.advanceTimersByTime(20_000);
    expect(await counters.add('a')).toEqual({ failures: 2, windowLeftMs: 40_000 });
    expect(await counters.read('b')).toEqual({ failures: 0, windowLeftMs: 60_000 });
  });

  it('starts from zero once the window is over', async () => {
    const counters = new InProcessFailureCounters();
    await counters.add('a');
    await counters.add('a');
    vi.advanceTimersByTime(60_000);
    expect(await counters.read('a')).toEqual({ failures: 0, windowLeftMs: 60_000 });
    expect(await counters.add('a')).toEqual({ failures: 1, windowLeftMs: 60_000 });
  });

  it('forgets the least recently counted address once 100,000 are counted', async () => {
    const counters = new InProcessFailureCounters();
    await counters.add('first');
    await counters.add('second');
    await counters.add('first');
    for (let i = 0; i < 99_998; i++) await counters.add(`10.0.${i >> 8}.${i & 255}`);
    await counters.add('one more');
    expect((await counters.read('second')).failures).toBe(0);
    expect((await counters.read('first')).failures).toBe(2);
  });
});

describe('AuthFailureLimiter', () => {
  const limiter = (env: Record<string, string> = {}) =>
    new AuthFailureLimiter(loadConfig({ AUTH_FAILURE_LIMIT_PER_MINUTE: '2', ...env }));

  const refusal = async (run: Promise<void>): Promise<ApiError> => {
    const error = await run.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  };

  it('is off at 0', () => {
    expect(limiter({ AUTH_FAILURE_LIMIT_PER_MINUTE: '0' }).enabled).toBe(false);
    expect(limiter().enabled).toBe(true);
  });

  it('refuses an address at the limit until its window ends, with the seconds left', async () => {
    const limits = limiter();
    await limits.recordFailure('a');
    await expect(limits.refuseIfOverLimit('a')).resolves.toBeUndefined();
    await limits.recordFailure('a');
    vi.advanceTimersByTime(15_500);

    const error = await refusal(limits.refuseIfOverLimit('a'));
    expect(error.body).toEqual({
      code: 'RATE_LIMITED',
      message:
        'Too many failed authentications from this address (limit 2 per minute); retry in 45 s',
      status: 429,
    });
    expect(error.headers).toEqual({ 'Retry-After': '45' });
    await expect(limits.refuseIfOverLimit('b')).resolves.toBeUndefined();

    vi.advanceTimersByTime(44_500);
    await expect(limits.refuseIfOverLimit('a')).resolves.toBeUndefined();
  });

  it('says at least 1 s in the last moments of a window', async () => {
    const limits = limiter();
    await limits.recordFailure('a');
    await limits.recordFailure('a');
    vi.advanceTimersByTime(59_999);
    expect((await refusal(limits.refuseIfOverLimit('a'))).headers).toEqual({ 'Retry-After': '1' });
  });

  it('lets requests through, and counts nothing, when Redis cannot answer', async () => {
    vi.useRealTimers();
    // Port 9 (discard) has nothing listening: every command fails at once.
    const limits = limiter({ REDIS_URL: 'redis://127.0.0.1:9' });
    try {
      for (let i = 0; i < 3; i++) await limits.recordFailure('a');
      await expect(limits.refuseIfOverLimit('a')).resolves.toBeUndefined();
    } finally {
      await limits.onModuleDestroy();
    }
  });
});
