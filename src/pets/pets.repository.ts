import { Injectable } from '@nestjs/common';
import { type Row, SqlRunner } from '../database/sql-runner.js';
import type { IdempotencyKeyEntity } from './idempotency-key.entity.js';
import type { PetEntity } from './pet.entity.js';
import type { PetStatus } from './pet-status.js';

export interface PetPageQuery {
  /** Only pets with a greater id: keyset pagination, so page N costs what page 1 costs. */
  afterId: number;
  status?: PetStatus;
  limit: number;
}

export type NewPetRow = Omit<PetEntity, 'id'>;
export type IdempotencyClaim = Omit<IdempotencyKeyEntity, 'petId'>;

/** A claim with the pet it made. */
export interface ClaimedPet {
  pet: PetEntity;
  requestHash: string;
  expiresAt: Date;
}

const PET_COLUMNS = 'p.id, p.name, p.category_id, p.status';

/**
 * The statements, once per dialect: PostgreSQL numbers its placeholders, SQLite takes them in
 * order. Each text is constant, so SQLite prepares it once and PostgreSQL caches its plan.
 */
const STATEMENTS = {
  postgres: {
    page: `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id > $1 ORDER BY p.id LIMIT $2`,
    pageWithStatus: `SELECT ${PET_COLUMNS} FROM pets p
      WHERE p.status = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,
    byId: `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = $1`,
    insert: 'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id',
    insertClaim: `INSERT INTO idempotency_keys (api_key_id, key, request_hash, pet_id, expires_at)
      VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING pet_id`,
    claimedPet: `SELECT ${PET_COLUMNS}, k.request_hash, k.expires_at
      FROM idempotency_keys k JOIN pets p ON p.id = k.pet_id
      WHERE k.api_key_id = $1 AND k.key = $2`,
    deleteExpiredClaim: `DELETE FROM idempotency_keys
      WHERE api_key_id = $1 AND key = $2 AND expires_at <= $3`,
    deleteExpiredClaims: 'DELETE FROM idempotency_keys WHERE expires_at <= $1',
  },
  sqlite: {
    page: `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id > ? ORDER BY p.id LIMIT ?`,
    pageWithStatus: `SELECT ${PET_COLUMNS} FROM pets p
      WHERE p.status = ? AND p.id > ? ORDER BY p.id LIMIT ?`,
    byId: `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = ?`,
    insert: 'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id',
    insertClaim: `INSERT INTO idempotency_keys (api_key_id, key, request_hash, pet_id, expires_at)
      VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING pet_id`,
    claimedPet: `SELECT ${PET_COLUMNS}, k.request_hash, k.expires_at
      FROM idempotency_keys k JOIN pets p ON p.id = k.pet_id
      WHERE k.api_key_id = ? AND k.key = ?`,
    deleteExpiredClaim: `DELETE FROM idempotency_keys
      WHERE api_key_id = ? AND key = ? AND expires_at <= ?`,
    deleteExpiredClaims: 'DELETE FROM idempotency_keys WHERE expires_at <= ?',
  },
} as const satisfies Record<SqlRunner['engine'], Record<string, string>>;

/** Thrown inside the claim's transaction to roll the pet back when the key is already taken. */
class ClaimTaken extends Error {}

/** All SQL on `pets` and `idempotency_keys`. */
@Injectable()
export class PetsRepository {
  private readonly sql: (typeof STATEMENTS)[SqlRunner['engine']];

  constructor(private readonly db: SqlRunner) {
    this.sql = STATEMENTS[db.engine];
  }

  async findPage({ afterId, status, limit }: PetPageQuery): Promise<PetEntity[]> {
    const rows = status
      ? await this.db.read(this.sql.pageWithStatus, [status, afterId, limit])
      : await this.db.read(this.sql.page, [afterId, limit]);
    return rows.map(toPetEntity);
  }

  async findById(id: number): Promise<PetEntity | null> {
    const [row] = await this.db.read(this.sql.byId, [id]);
    return row ? toPetEntity(row) : null;
  }

  async insert(pet: NewPetRow): Promise<PetEntity> {
    const [row] = await this.db.write(this.sql.insert, [pet.name, pet.categoryId, pet.status]);
    return { ...pet, id: Number(row.id) };
  }

  /**
   * Inserts the pet and its claim in one transaction, unless this API key already claimed this
   * key: then nothing is stored and the result is undefined. The claim's primary key, not a prior
   * lookup, decides, so concurrent retries on any number of instances create exactly one pet (on
   * PostgreSQL a second insert of the same key waits for the first transaction to end).
   */
  async insertClaimed(pet: NewPetRow, claim: IdempotencyClaim): Promise<PetEntity | undefined> {
    try {
      return await this.db.transaction(async (transaction) => {
        const [row] = await transaction.query(this.sql.insert, [
          pet.name,
          pet.categoryId,
          pet.status,
        ]);
        const id = Number(row.id);
        const claimed = await transaction.query(this.sql.insertClaim, [
          claim.apiKeyId,
          claim.key,
          claim.requestHash,
          id,
          claim.expiresAt.toISOString(),
        ]);
        if (claimed.length === 0) throw new ClaimTaken();
        return { ...pet, id };
      });
    } catch (error) {
      if (error instanceof ClaimTaken) return undefined;
      throw error;
    }
  }

  /** Read from the primary: the claim may have been committed a moment ago by another instance. */
  async findClaimedPet(apiKeyId: number, key: string): Promise<ClaimedPet | undefined> {
    const [row] = await this.db.write(this.sql.claimedPet, [apiKeyId, key]);
    if (!row) return undefined;
    return {
      pet: toPetEntity(row),
      requestHash: row.request_hash as string,
      expiresAt: new Date(row.expires_at as Date | string),
    };
  }

  /** Frees one key if it expired at or before `now`; the pet stays. */
  async deleteExpiredClaim(apiKeyId: number, key: string, now: Date): Promise<void> {
    await this.db.write(this.sql.deleteExpiredClaim, [apiKeyId, key, now.toISOString()]);
  }

  async deleteExpiredClaims(now: Date): Promise<void> {
    await this.db.write(this.sql.deleteExpiredClaims, [now.toISOString()]);
  }
}

/**
 * PostgreSQL returns `bigint` as a string (it may exceed 2^53); ids and category ids are bounded to
 * Number.MAX_SAFE_INTEGER by validation, so Number() is exact.
 */
function toPetEntity(row: Row): PetEntity {
  return {
    id: Number(row.id),
    name: row.name as string,
    categoryId: Number(row.category_id),
    status: row.status as PetStatus | null,
  };
}
