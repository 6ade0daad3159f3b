import { LRUCache } from 'lru-cache';

/**
 * State kept per client address, at most `maxAddresses` of them, the least recently used dropped
 * first. It grows as addresses come: lru-cache's `max` would allocate every slot at start, arrays
 * of 100,000 for state that fills only under a flood of failed authentications
 * (docs/performance.md, "Start-up and memory").
 */
export function addressCache<V extends object | number>(maxAddresses: number): LRUCache<string, V> {
  return new LRUCache<string, V>({ maxSize: maxAddresses, sizeCalculation: () => 1 });
}
