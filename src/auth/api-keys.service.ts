import { Injectable, Logger, Optional } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { onReadNode } from '../database/read-node.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { isPrintableAscii } from '../http/printable-ascii.js';
import { apiKeyPrefix, generateApiKey, hashApiKey, hashesEqual } from './api-key.js';
import type { ApiKeyPrincipal } from './principal.js';
import {
  DEFAULT_SCOPES,
  formatScopes,
  normalizeScopes,
  parseScopes,
  type Scope,
} from './scopes.js';

export interface ApiKeySummary {
  id: number;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  lastDeprecatedCallAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKeyOptions {
  /** Defaults to every scope. */
  scopes?: readonly Scope[];
  /** Whole days from now; undefined: the key never expires. */
  expiresInDays?: number;
}

/**
 * How long a verified key is trusted without asking the database again. It bounds how late a
 * revocation (or an expiry moved earlier) takes effect on a running replica, which must be within
 * 5 seconds (docs/api-design.md, "API keys").
 */
const VERIFIED_KEY_TTL_MS = 2_000;
/**
 * Keys this instance verified this recently pass an address blocked for failed authentications
 * (docs/api-design.md, "Rate limits"), so a working client sharing the address keeps working.
 */
const RECENTLY_VERIFIED_MS = 10 * 60_000;
/** At most one `last_used_at` write per key per minute per instance. */
const LAST_USE_RESOLUTION_MS = 60_000;
const MAX_REMEMBERED_KEYS = 10_000;
const KEY_NAME_MAX_LENGTH = 100;
const DAY_MS = 86_400_000;

interface VerifiedKey {
  principal: ApiKeyPrincipal;
  keyExpiresAt: number;
  trustedUntil: number;
}

/** The API-key store: issuing, listing, revoking and verifying keys. */
@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  /** The maps below are keyed by the key's SHA-256, so no key is held in memory in the clear. */
  private readonly verified = new Map<string, VerifiedKey>();
  private readonly lastVerifiedAt = new Map<string, number>();
  /** By key id: when this instance last wrote `last_used_at`. */
  private readonly lastUseRecordedAt = new Map<number, number>();
  private readonly lastDeprecatedCallRecordedAt = new Map<number, number>();
  /**
   * Key lookups in flight, by prefix. When a trusted key's 2 seconds run out, every request then
   * in flight with it misses the cache at once; they share one query instead of each running its
   * own TypeORM lookup back to back (docs/performance.md).
   */
  private readonly lookups = new Map<string, Promise<ApiKeyEntity | null>>();

  constructor(
    @InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    /** Present when METRICS_PORT is set: refused keys are counted by reason. */
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** Creates a key; the returned `key` is the only time it exists outside the client. */
  async create(
    name: string,
    { scopes = DEFAULT_SCOPES, expiresInDays }: NewApiKeyOptions = {},
  ): Promise<{ key: string; summary: ApiKeySummary }> {
    if (!isPrintableAscii(name, KEY_NAME_MAX_LENGTH) || name.trim() === '') {
      throw new RangeError(
        `key name must be 1 to ${KEY_NAME_MAX_LENGTH} printable ASCII characters`,
      );
    }
    const { key, prefix, hash } = generateApiKey();
    const saved = await this.keys.save(
      this.keys.create({
        name,
        prefix,
        keyHash: hash,
        scopes: formatScopes(normalizeScopes(scopes)),
        expiresAt:
          expiresInDays === undefined ? null : new Date(Date.now() + expiresInDays * DAY_MS),
        lastUsedAt: null,
        lastDeprecatedCallAt: null,
        revokedAt: null,
      }),
    );
    return { key, summary: summarize(saved) };
  }

  async list(): Promise<ApiKeySummary[]> {
    return (await this.keys.find({ order: { id: 'ASC' } })).map(summarize);
  }

  /** Revokes a key (idempotent); undefined when no key has that id. */
  async revoke(id: number): Promise<ApiKeySummary | undefined> {
    const key = await this.keys.findOneBy({ id });
    if (!key) return undefined;
    if (key.revokedAt === null) {
      key.revokedAt = new Date();
      await this.keys.save(key);
    }
    return summarize(key);
  }

  async isEmpty(): Promise<boolean> {
    return !(await this.keys.exists());
  }

  /** The key's owner if the key is known, not revoked and not expired; undefined otherwise. */
  async authenticate(key: string): Promise<ApiKeyPrincipal | undefined> {
    const prefix = apiKeyPrefix(key);
    if (prefix === undefined) return this.refused(undefined, 'malformed');
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.verified.get(hash);
    if (cached && cached.trustedUntil > now && cached.keyExpiresAt > now) {
      this.recordUse(cached.principal.id, now);
      return cached.principal;
    }

    const stored = await this.lookUp(prefix);
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
    remember(this.verified, hash, {
      principal,
      keyExpiresAt: stored.expiresAt?.getTime() ?? Infinity,
      trustedUntil: now + VERIFIED_KEY_TTL_MS,
    });
    remember(this.lastVerifiedAt, hash, now);
    this.recordUse(principal.id, now);
    return principal;
  }

  /**
   * The stored key with this prefix, read on the read node like pet reads, so that a crashed
   * primary does not refuse every client whose key is not cached (docs/deployment.md).
   */
  private lookUp(prefix: string): Promise<ApiKeyEntity | null> {
    let lookup = this.lookups.get(prefix);
    if (!lookup) {
      lookup = onReadNode(this.dataSource, (manager) =>
        manager.findOneBy(ApiKeyEntity, { prefix }),
      ).finally(() => this.lookups.delete(prefix));
      this.lookups.set(prefix, lookup);
    }
    return lookup;
  }

  /**
   * Notes that this key called a deprecated operation, for `apikey list`: like its last use, at
   * most one write per key per minute on this instance, never waited for.
   */
  recordDeprecatedCall(id: number): void {
    this.recordAtMostPerMinute(this.lastDeprecatedCallRecordedAt, id, 'lastDeprecatedCallAt');
  }

  /**
   * A key the guard answers with 401: forgotten if it was trusted, and counted by reason
   * (docs/observability.md, "Metrics").
   */
  private refused(
    hash: string | undefined,
    reason: 'malformed' | 'unknown' | 'revoked' | 'expired',
  ): undefined {
    if (hash !== undefined) {
      this.verified.delete(hash);
      this.lastVerifiedAt.delete(hash);
    }
    this.metrics?.authFailures.inc({ reason });
    return undefined;
  }

  /** Whether this instance accepted this exact key in the last 10 minutes. */
  wasVerifiedRecently(key: string): boolean {
    const at = this.lastVerifiedAt.get(hashApiKey(key));
    return at !== undefined && Date.now() - at < RECENTLY_VERIFIED_MS;
  }

  /**
   * Notes the key's use without a write per request: at most one per key per minute on this
   * instance, and never waited for, so the request does not pay for it (nor wait out a database
   * timeout). A failed write is logged; the next minute's write catches up.
   */
  private recordUse(id: number, now: number): void {
    this.recordAtMostPerMinute(this.lastUseRecordedAt, id, 'lastUsedAt', now);
  }

  private recordAtMostPerMinute(
    recordedAt: Map<number, number>,
    id: number,
    column: 'lastUsedAt' | 'lastDeprecatedCallAt',
    now = Date.now(),
  ): void {
    const last = recordedAt.get(id);
    if (last !== undefined && now - last < LAST_USE_RESOLUTION_MS) return;
    remember(recordedAt, id, now);
    this.keys.update({ id }, { [column]: new Date(now) }).catch((error: unknown) => {
      this.logger.warn(`${column} of key ${id} not recorded: ${(error as Error).message}`);
    });
  }
}

/** Sets an entry in a bounded map, dropping the oldest entry when it is full. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  if (map.size >= MAX_REMEMBERED_KEYS) map.delete(map.keys().next().value!);
  map.set(key, value);
}

function summarize(key: ApiKeyEntity): ApiKeySummary {
  const { id, name, prefix, createdAt, expiresAt, lastUsedAt, lastDeprecatedCallAt, revokedAt } =
    key;
  return {
    id,
    name,
    prefix,
    scopes: parseScopes(key.scopes),
    createdAt,
    expiresAt,
    lastUsedAt,
    lastDeprecatedCallAt,
    revokedAt,
  };
}
