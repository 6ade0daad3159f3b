import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isPrintableAscii } from '../http/printable-ascii.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { generateApiKey } from './api-key.js';
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

const KEY_NAME_MAX_LENGTH = 100;
const DAY_MS = 86_400_000;

/** The keys in the database: issuing, listing and revoking them (the CLI and the local key). */
@Injectable()
export class ApiKeyStore {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

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
