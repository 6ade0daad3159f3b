import { describe, expect, it } from 'vitest';
import { Clock } from '../../../src/time/clock.js';

describe('Clock.waitUntil', () => {
  it('returns no earlier than the time it waits for', async () => {
    const clock = new Clock();
    const until = clock.elapsedMs() + 30;
    await clock.waitUntil(until, new AbortController().signal);
    expect(clock.elapsedMs()).toBeGreaterThanOrEqual(until);
  });

  it('returns at once for a time already past, and on an abort, without rejecting', async () => {
    const clock = new Clock();
    const started = clock.elapsedMs();
    await clock.waitUntil(started - 1, new AbortController().signal);
    const stopping = new AbortController();
    const waiting = clock.waitUntil(started + 60_000, stopping.signal);
    stopping.abort();
    await waiting;
    expect(clock.elapsedMs() - started).toBeLessThan(1_000);
  });
});
