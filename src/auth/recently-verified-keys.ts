import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { MAX_REMEMBERED_KEYS } from './api-key.js';

const RECENTLY_VERIFIED_MS = 10 * 60_000;

/**
 * Keys this instance accepted in the last 10 minutes. They pass an address blocked for failed
 * authentications (docs/api-design.md, "Rate limits"), so a working client sharing the address
 * keeps working. Kept by the key's SHA-256, so no key is held in memory in the clear.
 */
@Injectable()
export class RecentlyVerifiedKeys {
  private readonly verifiedAt = new LRUCache<string, number>({ max: MAX_REMEMBERED_KEYS });

  /** The key with this hash was accepted now. */
  add(hash: string, now = Date.now()): void {
    this.verifiedAt.set(hash, now);
  }

  /** The key with this hash was refused: it no longer passes a blocked address. */
  delete(hash: string): void {
    this.verifiedAt.delete(hash);
  }

  /** Whether this instance accepted the key with this hash in the last 10 minutes. */
  includes(hash: string): boolean {
    const at = this.verifiedAt.get(hash);
    return at !== undefined && Date.now() - at < RECENTLY_VERIFIED_MS;
  }
}
