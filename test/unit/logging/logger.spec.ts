import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isoTimeOfThisMillisecond } from '../../../src/logging/logger.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00.123Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('isoTimeOfThisMillisecond', () => {
  it("gives pino's time field: the current time in ISO 8601, to the millisecond", () => {
    expect(isoTimeOfThisMillisecond()()).toBe(',"time":"2026-11-23T12:00:00.123Z"');
  });

  it('gives the next millisecond its own time', () => {
    const time = isoTimeOfThisMillisecond();
    expect(time()).toBe(',"time":"2026-11-23T12:00:00.123Z"');
    expect(time()).toBe(',"time":"2026-11-23T12:00:00.123Z"');
    vi.advanceTimersByTime(1);
    expect(time()).toBe(',"time":"2026-11-23T12:00:00.124Z"');
    vi.setSystemTime(Date.parse('2026-11-23T11:59:59.999Z'));
    expect(time()).toBe(',"time":"2026-11-23T11:59:59.999Z"');
  });
});
