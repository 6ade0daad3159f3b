import { Injectable, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Metrics } from '../metrics/metrics.js';
import { ApiKeyLookup } from './api-key-lookup.js';
import { ApiKeyUsage } from './api-key-usage.js';
import { apiKeyPrefix, hashApiKey, hashesEqual, MAX_REMEMBERED_KEYS } from './api-key.js';
import type { ApiKeyPrincipal } from './principal.js';
import { RecentlyVerifiedKeys } from './recently-verified-keys.js';
import { parseScopes } from './scopes.js';

/**
 * How long a verified key is trusted without asking the database again. It bounds how late a
 * revocation (or an expiry moved earlier) takes effect on a running replica, which must be within
 * 5 seconds (docs/api-design.md, "API keys").
 */
const VERIFIED_KEY_TTL_MS = 2_000;

interface VerifiedKey {
  principal: ApiKeyPrincipal;
  keyExpiresAt: number;
  trustedUntil: number;
}

/** Why a key the strategy was given is refused (docs/observability.md, "Metrics"). */
type RefusalReason = 'malformed' | 'unknown' | 'revoked' | 'expired';

/** Checks a presented key against the database, trusting a key it verified for 2 seconds. */
@Injectable()
export class ApiKeyVerifier {
  /** By the key's SHA-256, so no key is held in memory in the clear. */
  private readonly verified = new LRUCache<string, VerifiedKey>({ max: MAX_REMEMBERED_KEYS });

  constructor(
    private readonly lookup: ApiKeyLookup,
    private readonly usage: ApiKeyUsage,
    private readonly recentKeys: RecentlyVerifiedKeys,
    /** Present when METRICS_PORT is set: refused keys are counted by reason. */
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** The key's owner if the key is known, not revoked and not expired; undefined otherwise. */
  async verify(key: string): Promise<ApiKeyPrincipal | undefined> {
    const prefix = apiKeyPrefix(key);
    if (prefix === undefined) return this.refused(undefined, 'malformed');
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.verified.get(hash);
    if (cached && cached.trustedUntil > now && cached.keyExpiresAt > now) {
      this.usage.recordUse(cached.principal.id, now);
      return cached.principal;
    }

    const stored = await this.lookup.byPrefix(prefix);
    if (!stored || !hashesEqual(stored.keyHash, hash)) return this.refused(hash, 'unknown');
    if (stored.revokedAt !== null) return this.refused(hash, 'revoked');
    if (stored.expiresAt !== null && stored.expiresAt.getTime() <= now)
      return this.refused(hash, 'expired');
    const principal: ApiKeyPrincipal = {
      id: stored.id,
      name: stored.name,
      prefix: stored.prefix,
      scopes: parseScopes(stored.scopes),
    };
    this.verified.set(hash, {
      principal,
      keyExpiresAt: stored.expiresAt?.getTime() ?? Infinity,
      trustedUntil: now + VERIFIED_KEY_TTL_MS,
    });
    this.recentKeys.add(hash, now);
    this.usage.recordUse(principal.id, now);
    return principal;
  }

  /** A key the guard answers with 401: forgotten if it was trusted, and counted by reason. */
  private refused(hash: string | undefined, reason: RefusalReason): undefined {
    if (hash !== undefined) {
      this.verified.delete(hash);
      this.recentKeys.delete(hash);
    }
    this.metrics?.authFailures.inc({ reason });
    return undefined;
  }
}
