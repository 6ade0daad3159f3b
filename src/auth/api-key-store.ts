import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../database/sql-runner.js';
import { isPrintableAscii } from '../http/printable-ascii.js';
import type { ApiKeyEntity } from './api-key.entity.js';
import { generateApiKey } from './api-key.js';
import { ApiKeyRows } from './api-key-rows.js';
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

/** A new key's stored fields; the database numbers it and dates its creation. */
type NewApiKeyRow = Pick<ApiKeyEntity, 'name' | 'prefix' | 'keyHash' | 'scopes' | 'expiresAt'>;

function statements(db: SqlRunner, { columns }: ApiKeyRows) {
  return {
    insert: db.statement<Record<keyof NewApiKeyRow, unknown>>(
      `INSERT INTO api_keys (name, prefix, key_hash, scopes, expires_at)
      VALUES (:name, :prefix, :keyHash, :scopes, :expiresAt) RETURNING ${columns}`,
    ),
    all: db.statement(`SELECT ${columns} FROM api_keys ORDER BY id`),
    // The first revocation's time stays: revoking again changes nothing.
    revoke: db.statement<{ id: number; now: unknown }>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, :now) WHERE id = :id
      RETURNING ${columns}`,
    ),
    any: db.statement('SELECT 1 AS found FROM api_keys LIMIT 1'),
  };
}

/**
 * The keys in the database: issuing, listing and revoking them (the CLI and the local key), on the
 * primary, which has the latest keys.
 */
@Injectable()
export class ApiKeyStore {
  private readonly rows: ApiKeyRows;
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: SqlRunner) {
    this.rows = new ApiKeyRows(db);
    this.sql = statements(db, this.rows);
  }

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
    const row: NewApiKeyRow = {
      name,
      prefix,
      keyHash: hash,
      scopes: formatScopes(normalizeScopes(scopes)),
      expiresAt: expiresInDays === undefined ? null : new Date(Date.now() + expiresInDays * DAY_MS),
    };
    const { insert } = this.sql;
    const [saved] = await this.db.writeStatement(insert, this.rows.toParameters(row));
    return { key, summary: summarize(this.rows.toEntity(saved)) };
  }

  async list(): Promise<ApiKeySummary[]> {
    const { all } = this.sql;
    return (await this.db.writeStatement(all, {})).map((row) => summarize(this.rows.toEntity(row)));
  }

  /** Revokes a key (idempotent); undefined when no key has that id. */
  async revoke(id: number): Promise<ApiKeySummary | undefined> {
    const { revoke } = this.sql;
    const now = this.rows.toParameters({ revokedAt: new Date() }).revokedAt;
    const [row] = await this.db.writeStatement(revoke, { id, now });
    return row ? summarize(this.rows.toEntity(row)) : undefined;
  }

  async isEmpty(): Promise<boolean> {
    const { any } = this.sql;
    return (await this.db.writeStatement(any, {})).length === 0;
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
