import { Injectable, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Metrics } from '../metrics/metrics.js';
import type { ApiKeyEntity } from './api-key.entity.js';
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
  trustedUntil: number;
}

/** Why a key the strategy was given is refused (docs/observability.md, "Metrics"). */
type RefusalReason = 'malformed' | 'unknown' | 'revoked' | 'expired';

/**
 * Checks a presented key against the database, trusting a key it verified for 2 seconds; and
 * checks again, by id, the keys of responses that stay open.
 */
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

  /**
   * The key's owner if the key is known, not revoked and not expired; undefined otherwise.
   * `hash`: the key's SHA-256 when the caller has it already.
   */
  async verify(key: string, hash = hashApiKey(key)): Promise<ApiKeyPrincipal | undefined> {
    const prefix = apiKeyPrefix(key);
    if (prefix === undefined) return this.refused(undefined, 'malformed');
    const now = Date.now();
    const cached = this.verified.get(hash);
    if (cached && cached.trustedUntil > now && !hasPassed(cached.principal.expiresAt, now)) {
      this.usage.recordUse(cached.principal.id, now);
      return cached.principal;
    }

    const stored = await this.lookup.byPrefix(prefix);
    if (!stored || !hashesEqual(stored.keyHash, hash)) return this.refused(hash, 'unknown');
    const refusal = refusalOf(stored, now);
    if (refusal !== undefined) return this.refused(hash, refusal);
    const principal = principalFrom(stored);
    this.verified.set(hash, { principal, trustedUntil: now + VERIFIED_KEY_TTL_MS });
    this.recentKeys.add(hash, now);
    this.usage.recordUse(principal.id, now);
    return principal;
  }

  /**
   * Keys accepted earlier, as the database has them now, for responses that outlive their request
   * (event streams, docs/events.md): by id, the owner of each key still valid; an id left out is
   * revoked, expired or gone. The keys this instance trusts take the answer at once, so its next
   * request with one of them is answered as the stream was.
   */
  async recheck(ids: readonly number[]): Promise<Map<number, ApiKeyPrincipal>> {
    const now = Date.now();
    const valid = new Map<number, ApiKeyPrincipal>();
    for (const stored of await this.lookup.byIds(ids)) {
      if (refusalOf(stored, now) === undefined) valid.set(stored.id, principalFrom(stored));
    }
    this.applyRecheck(new Set(ids), valid);
    return valid;
  }

  /** Trusted keys among the rechecked ones: the valid get their owner as it is now, the rest go. */
  private applyRecheck(
    rechecked: ReadonlySet<number>,
    valid: ReadonlyMap<number, ApiKeyPrincipal>,
  ): void {
    const refusedHashes: string[] = [];
    this.verified.forEach((cached, hash) => {
      if (!rechecked.has(cached.principal.id)) return;
      const principal = valid.get(cached.principal.id);
      if (principal) cached.principal = principal;
      else refusedHashes.push(hash);
    });
    for (const hash of refusedHashes) this.forget(hash);
  }

  /** A key the guard answers with 401: forgotten if it was trusted, and counted by reason. */
  private refused(hash: string | undefined, reason: RefusalReason): undefined {
    if (hash !== undefined) this.forget(hash);
    this.metrics?.authFailures.inc({ reason });
    return undefined;
  }

  private forget(hash: string): void {
    this.verified.delete(hash);
    this.recentKeys.delete(hash);
  }
}

/** Why a stored key is refused now, if it is. */
function refusalOf(stored: ApiKeyEntity, now: number): 'revoked' | 'expired' | undefined {
  if (stored.revokedAt !== null) return 'revoked';
  if (hasPassed(stored.expiresAt, now)) return 'expired';
  return undefined;
}

/** Whether a key's expiry (null: never) is at or before `now`. */
function hasPassed(expiresAt: Date | null, now: number): boolean {
  return expiresAt !== null && expiresAt.getTime() <= now;
}

function principalFrom(stored: ApiKeyEntity): ApiKeyPrincipal {
  return {
    id: stored.id,
    name: stored.name,
    prefix: stored.prefix,
    scopes: parseScopes(stored.scopes),
    expiresAt: stored.expiresAt,
  };
}
