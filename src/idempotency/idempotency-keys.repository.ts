import { Injectable } from '@nestjs/common';
import { SqlRunner, type SqlTransaction } from '../database/sql-runner.js';
import type { IdempotencyKeyEntity } from './idempotency-key.entity.js';

/** The first answer to a create with an Idempotency-Key, as sent: what a retry gets back. */
export interface StoredResponse {
  /** The JSON text of the body. */
  body: string;
  etag: string;
}

/** A claim as a retry finds it; `response` is null where it was stored without one. */
export interface Claim {
  requestHash: string;
  expiresAt: Date;
  petId: number;
  response: StoredResponse | null;
}

function statements(db: SqlRunner) {
  return {
    insertClaim: db.statement<{
      apiKeyId: number;
      key: string;
      requestHash: string;
      petId: number;
      expiresAt: string;
      responseBody: string;
      responseEtag: string;
    }>(
      `INSERT INTO idempotency_keys
        (api_key_id, key, request_hash, pet_id, expires_at, response_body, response_etag)
      VALUES (:apiKeyId, :key, :requestHash, :petId, :expiresAt, :responseBody, :responseEtag)
      ON CONFLICT DO NOTHING RETURNING pet_id`,
    ),
    claim: db.statement<{ apiKeyId: number; key: string }>(
      `SELECT k.request_hash, k.expires_at, k.pet_id, k.response_body, k.response_etag
      FROM idempotency_keys k WHERE k.api_key_id = :apiKeyId AND k.key = :key`,
    ),
    deleteExpiredClaim: db.statement<{ apiKeyId: number; key: string; now: string }>(
      `DELETE FROM idempotency_keys
      WHERE api_key_id = :apiKeyId AND key = :key AND expires_at <= :now`,
    ),
    deleteExpiredClaims: db.statement<{ now: string }>(
      'DELETE FROM idempotency_keys WHERE expires_at <= :now',
    ),
  };
}

/** All SQL on `idempotency_keys`, the one table of every create's Idempotency-Keys. */
@Injectable()
export class IdempotencyKeysRepository {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
  }

  /**
   * Claims the key inside the create's `transaction`, storing the response a retry gets; false,
   * claiming nothing, when this API key already claimed it. The claim's primary key decides, not
   * a prior lookup, so concurrent retries on any number of instances claim it once.
   */
  async claim(
    transaction: SqlTransaction,
    claim: Omit<IdempotencyKeyEntity, 'responseBody' | 'responseEtag'>,
    response: StoredResponse,
  ): Promise<boolean> {
    const { insertClaim } = this.sql;
    const claimed = await transaction.query(
      insertClaim.text,
      insertClaim.values({
        ...claim,
        expiresAt: claim.expiresAt.toISOString(),
        responseBody: response.body,
        responseEtag: response.etag,
      }),
    );
    return claimed.length > 0;
  }

  /** Read from the primary: the claim may have been committed a moment ago by another instance. */
  async findClaim(apiKeyId: number, key: string): Promise<Claim | undefined> {
    const [row] = await this.db.writeStatement(this.sql.claim, { apiKeyId, key });
    if (!row) return undefined;
    return {
      requestHash: row.request_hash as string,
      expiresAt: new Date(row.expires_at as Date | string),
      petId: Number(row.pet_id),
      response:
        row.response_body === null
          ? null
          : { body: row.response_body as string, etag: row.response_etag as string },
    };
  }

  /** Frees one key if it expired at or before `now`; what it made stays. */
  async deleteExpiredClaim(apiKeyId: number, key: string, now: Date): Promise<void> {
    await this.db.writeStatement(this.sql.deleteExpiredClaim, {
      apiKeyId,
      key,
      now: now.toISOString(),
    });
  }

  async deleteExpiredClaims(now: Date): Promise<void> {
    await this.db.writeStatement(this.sql.deleteExpiredClaims, { now: now.toISOString() });
  }
}
