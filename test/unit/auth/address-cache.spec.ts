import { describe, expect, it } from 'vitest';
import { addressCache } from '../../../src/auth/address-cache.js';

describe('addressCache', () => {
  it('keeps at most its bound of addresses, dropping the least recently used first', () => {
    const cache = addressCache<number>(3);
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) cache.set(address, 1);
    expect(cache.get('10.0.0.1')).toBe(1);
    cache.set('10.0.0.4', 1);
    expect([...cache.keys()].sort()).toEqual(['10.0.0.1', '10.0.0.3', '10.0.0.4']);
    expect(cache.size).toBe(3);
  });

  it('replaces an address in place, which does not count twice', () => {
    const cache = addressCache<{ failures: number }>(2);
    cache.set('10.0.0.1', { failures: 1 });
    cache.set('10.0.0.1', { failures: 2 });
    cache.set('10.0.0.2', { failures: 1 });
    expect(cache.get('10.0.0.1')).toEqual({ failures: 2 });
    expect(cache.size).toBe(2);
  });
});
