import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { isPrintableAscii } from '../common/printable-ascii.js';
import { apiKeyPrefix, generateApiKey, hashApiKey, hashesEqual } from './api-key.js';
import type { ApiKeyPrincipal } from './principal.js';

export type ApiKeySummary = Pick<
  ApiKeyEntity,
  'id' | 'name' | 'prefix' | 'createdAt' | 'revokedAt'
>;

/**
 * How long a verified key is trusted without asking the database again. It bounds how late a
 * revocation takes effect on a running replica, which must be within 5 seconds
 * (docs/api-design.md, "API keys").
 */
const VERIFIED_KEY_TTL_MS = 2_000;
const MAX_VERIFIED_KEYS = 10_000;
const KEY_NAME_MAX_LENGTH = 100;

/** The API-key store: issuing, listing, revoking and verifying keys. */
@Injectable()
export class ApiKeysService {
  /** Keyed by the key's SHA-256, so no key is held in memory in the clear. */
  private readonly verified = new Map<string, { principal: ApiKeyPrincipal; expiresAt: number }>();

  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  /** Creates a key; the returned `key` is the only time it exists outside the client. */
  async create(name: string): Promise<{ key: string; summary: ApiKeySummary }> {
    if (!isPrintableAscii(name, KEY_NAME_MAX_LENGTH) || name.trim() === '') {
      throw new RangeError(
        `key name must be 1 to ${KEY_NAME_MAX_LENGTH} printable ASCII characters`,
      );
    }
    const { key, prefix, hash } = generateApiKey();
    const saved = await this.keys.save(
      this.keys.create({ name, prefix, keyHash: hash, revokedAt: null }),
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

  /** The key's owner if the key is known and not revoked; undefined otherwise. */
  async authenticate(key: string): Promise<ApiKeyPrincipal | undefined> {
    const prefix = apiKeyPrefix(key);
    if (prefix === undefined) return undefined;
    const hash = hashApiKey(key);
    const cached = this.verified.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;

    const stored = await this.keys.findOneBy({ prefix });
    if (!stored || stored.revokedAt !== null || !hashesEqual(stored.keyHash, hash)) {
      this.verified.delete(hash);
      return undefined;
    }
    const principal = { id: stored.id, name: stored.name, prefix: stored.prefix };
    this.remember(hash, principal);
    return principal;
  }

  private remember(hash: string, principal: ApiKeyPrincipal): void {
    if (this.verified.size >= MAX_VERIFIED_KEYS) {
      this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(hash, { principal, expiresAt: Date.now() + VERIFIED_KEY_TTL_MS });
  }
}

function summarize({ id, name, prefix, createdAt, revokedAt }: ApiKeyEntity): ApiKeySummary {
  return { id, name, prefix, createdAt, revokedAt };
}
