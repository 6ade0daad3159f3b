import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PetEntity } from './pet.entity.js';
import type { PetStatus } from './pet-status.js';

export interface PetPageQuery {
  /** Only pets with a greater id: keyset pagination, so page N costs what page 1 costs. */
  afterId: number;
  status?: PetStatus;
  limit: number;
}

/** Who created a pet with which Idempotency-Key, and until when a retry gets that pet back. */
export interface IdempotencyClaim {
  apiKeyId: number;
  key: string;
  requestHash: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface ClaimedPet {
  pet: PetEntity;
  requestHash: string;
  expiresAt: number;
}

const COLUMNS = 'id, name, category_id AS "categoryId", status';
const CLAIM_COLUMNS =
  'idempotency_api_key_id, idempotency_key, idempotency_request_hash, idempotency_expires_at';
const NO_CLAIM = `idempotency_api_key_id = NULL, idempotency_key = NULL,
  idempotency_request_hash = NULL, idempotency_expires_at = NULL`;

/**
 * All SQL that touches `pets`. Hand-written statements rather than `find()`: the request path then
 * skips query building and entity hydration, and each SQL text stays constant, so the driver's
 * prepared-statement cache (SQLite) and PostgreSQL's plan cache reuse it.
 */
@Injectable()
export class PetsRepository {
  private readonly sql: ReturnType<typeof statementsFor>;

  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {
    this.sql = statementsFor(
      pets.manager.connection.options.type === 'postgres' ? 'postgres' : 'sqlite',
    );
  }

  async findPage({ afterId, status, limit }: PetPageQuery): Promise<PetEntity[]> {
    const rows: PetRow[] = status
      ? await this.pets.query(this.sql.pageWithStatus, [status, afterId, limit])
      : await this.pets.query(this.sql.page, [afterId, limit]);
    return rows.map(toPetEntity);
  }

  async findById(id: number): Promise<PetEntity | null> {
    const [row]: PetRow[] = await this.pets.query(this.sql.byId, [id]);
    return row ? toPetEntity(row) : null;
  }

  async insert(pet: Omit<PetEntity, 'id'>): Promise<PetEntity> {
    const [{ id }]: Pick<PetRow, 'id'>[] = await this.pets.query(this.sql.insert, [
      pet.name,
      pet.categoryId,
      pet.status,
    ]);
    return { ...pet, id: Number(id) };
  }

  /**
   * Inserts the pet unless a pet already holds this key for this API key; the unique index, not
   * a prior lookup, decides, so concurrent retries on any replica create exactly one pet.
   * Undefined when the key was taken.
   */
  async insertClaimed(
    pet: Omit<PetEntity, 'id'>,
    claim: IdempotencyClaim,
  ): Promise<PetEntity | undefined> {
    const [row]: Pick<PetRow, 'id'>[] = await this.pets.query(this.sql.insertClaimed, [
      pet.name,
      pet.categoryId,
      pet.status,
      claim.apiKeyId,
      claim.key,
      claim.requestHash,
      claim.expiresAt,
    ]);
    return row ? { ...pet, id: Number(row.id) } : undefined;
  }

  async findClaimed(apiKeyId: number, key: string): Promise<ClaimedPet | undefined> {
    const [row]: ClaimedPetRow[] = await this.pets.query(this.sql.byClaim, [apiKeyId, key]);
    return row
      ? { pet: toPetEntity(row), requestHash: row.requestHash, expiresAt: Number(row.expiresAt) }
      : undefined;
  }

  /** Frees one key if it expired at or before `now`; the pet itself stays. */
  async releaseExpiredClaim(apiKeyId: number, key: string, now: number): Promise<void> {
    await this.pets.query(this.sql.releaseExpiredClaim, [apiKeyId, key, now]);
  }

  async releaseAllExpiredClaims(now: number): Promise<void> {
    await this.pets.query(this.sql.releaseAllExpiredClaims, [now]);
  }
}

/** A row as the drivers return it: PostgreSQL hands `bigint` over as a string. */
interface PetRow {
  id: number | string;
  name: string;
  categoryId: number | string;
  status: PetStatus | null;
}

interface ClaimedPetRow extends PetRow {
  requestHash: string;
  expiresAt: number | string;
}

/** Ids and category ids are bounded to Number.MAX_SAFE_INTEGER by validation, so Number() is exact. */
function toPetEntity({ id, name, categoryId, status }: PetRow): PetEntity {
  return { id: Number(id), name, categoryId: Number(categoryId), status };
}

function statementsFor(engine: 'postgres' | 'sqlite') {
  // Written with `?`; PostgreSQL numbers its placeholders.
  const sql = (text: string) => (engine === 'postgres' ? numberPlaceholders(text) : text);
  return {
    page: sql(`SELECT ${COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`),
    pageWithStatus: sql(
      `SELECT ${COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
    ),
    byId: sql(`SELECT ${COLUMNS} FROM pets WHERE id = ?`),
    insert: sql('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id'),
    insertClaimed: sql(
      `INSERT INTO pets (name, category_id, status, ${CLAIM_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
    ),
    byClaim: sql(
      `SELECT ${COLUMNS}, idempotency_request_hash AS "requestHash",
         idempotency_expires_at AS "expiresAt"
       FROM pets WHERE idempotency_api_key_id = ? AND idempotency_key = ?`,
    ),
    releaseExpiredClaim: sql(
      `UPDATE pets SET ${NO_CLAIM}
       WHERE idempotency_api_key_id = ? AND idempotency_key = ? AND idempotency_expires_at <= ?`,
    ),
    releaseAllExpiredClaims: sql(
      `UPDATE pets SET ${NO_CLAIM}
       WHERE idempotency_key IS NOT NULL AND idempotency_expires_at <= ?`,
    ),
  };
}

function numberPlaceholders(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}
