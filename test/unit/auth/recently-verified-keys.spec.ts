import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/auth/api-key.js';
import { RecentlyVerifiedKeys } from '../../../src/auth/recently-verified-keys.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RecentlyVerifiedKeys', () => {
  const { hash } = generateApiKey();

  it('includes a key added by its hash, and no other', () => {
    const keys = new RecentlyVerifiedKeys();
    expect(keys.includes(hash)).toBe(false);
    keys.add(hash);
    expect(keys.includes(hash)).toBe(true);
    expect(keys.includes(generateApiKey().hash)).toBe(false);
  });

  it('includes it for 10 minutes from when it was accepted', () => {
    const keys = new RecentlyVerifiedKeys();
    keys.add(hash, Date.now() - 60_000);
    vi.advanceTimersByTime(539_999);
    expect(keys.includes(hash)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(keys.includes(hash)).toBe(false);
  });

  it('starts the 10 minutes again when the key is accepted again', () => {
    const keys = new RecentlyVerifiedKeys();
    keys.add(hash);
    vi.advanceTimersByTime(300_000);
    keys.add(hash);
    vi.advanceTimersByTime(599_999);
    expect(keys.includes(hash)).toBe(true);
  });

  it('forgets a deleted key at once', () => {
    const keys = new RecentlyVerifiedKeys();
    keys.add(hash);
    keys.delete(hash);
    expect(keys.includes(hash)).toBe(false);
  });

  it('holds 10,000 keys: the least recently used one goes first', () => {
    const keys = new RecentlyVerifiedKeys();
    keys.add(hash);
    for (let i = 0; i < 9_999; i++) keys.add(hashApiKey(String(i)));
    expect(keys.includes(hash)).toBe(true);
    keys.add(hashApiKey('one more'));
    expect(keys.includes(hashApiKey('0'))).toBe(false);
    expect(keys.includes(hashApiKey('1'))).toBe(true);
    expect(keys.includes(hash)).toBe(true);
  });
});
