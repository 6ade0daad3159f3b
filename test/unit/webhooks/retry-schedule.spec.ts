import { describe, expect, it } from 'vitest';
import { nextAttemptDelayMs, retryAfterMs } from '../../../src/webhooks/retry-schedule.js';

const SCHEDULE = [0, 5_000, 300_000, 86_400_000];
const NOW = new Date('2026-11-25T12:00:00.000Z');

describe('nextAttemptDelayMs', () => {
  it('waits the delay before the next attempt: the schedule entry after the attempts made', () => {
    expect(nextAttemptDelayMs(SCHEDULE, 1, undefined, 0.5)).toBe(5_000);
    expect(nextAttemptDelayMs(SCHEDULE, 2, undefined, 0.5)).toBe(300_000);
  });

  it('jitters by ±10 %', () => {
    expect(nextAttemptDelayMs(SCHEDULE, 2, undefined, 0)).toBe(270_000);
    expect(nextAttemptDelayMs(SCHEDULE, 2, undefined, 0.999999)).toBe(330_000);
  });

  it('gives up after the last attempt', () => {
    expect(nextAttemptDelayMs(SCHEDULE, 4, undefined, 0.5)).toBeUndefined();
    expect(nextAttemptDelayMs([0], 1, undefined, 0.5)).toBeUndefined();
  });

  it('waits at least the Retry-After, but never more than a day', () => {
    expect(nextAttemptDelayMs(SCHEDULE, 1, 60_000, 0.5)).toBe(60_000);
    expect(nextAttemptDelayMs(SCHEDULE, 1, 1_000, 0.5)).toBe(5_000);
    expect(nextAttemptDelayMs([0, 1_000], 1, 10 * 86_400_000, 0.5)).toBe(86_400_000);
  });
});

describe('retryAfterMs', () => {
  it.each([
    [503, '2', 2_000],
    [429, ' 120 ', 120_000],
    [503, 'Wed, 25 Nov 2026 12:00:30 GMT', 30_000],
    [503, 'Wed, 25 Nov 2026 11:00:00 GMT', 0],
  ])('reads %i Retry-After %j', (status, header, ms) => {
    expect(retryAfterMs(status, header, NOW)).toBe(ms);
  });

  it.each([
    [500, '2'],
    [503, undefined],
    [503, '-1'],
    [503, '1.5'],
    [503, 'soon'],
  ])('ignores %i Retry-After %j', (status, header) => {
    expect(retryAfterMs(status, header, NOW)).toBeUndefined();
  });
});
