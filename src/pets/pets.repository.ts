import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Database, Statement } from 'better-sqlite3';
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

/** In the order of `PetRow`. */
const COLUMNS = 'id, name, category_id, status';
const CLAIM_COLUMNS =
  'idempotency_api_key_id, idempotency_key, idempotency_request_hash, idempotency_expires_at';
const NO_CLAIM = `idempotency_api_key_id = NULL, idempotency_key = NULL,
  idempotency_request_hash = NULL, idempotency_expires_at = NULL`;

/**
 * All SQL that touches `pets`. Hand-written statements rather than `find()`: the request path then
 * skips query building and entity hydration, and each SQL text stays constant, so it is prepared
 * once (SQLite) or its plan cached (PostgreSQL). Rows come back as arrays in select-list order.
 */
@Injectable()
export class PetsRepository {
  private readonly sql: ReturnType<typeof statementsFor>;
  private readonly rows: RunStatement;

  constructor(@InjectRepository(PetEntity) pets: Repository<PetEntity>) {
    const { options, driver } = pets.manager.connection;
    if (options.type === 'better-sqlite3') {
      this.sql = statementsFor('sqlite');
      this.rows = sqliteStatements(
        (driver as unknown as { databaseConnection: Database }).databaseConnection,
      );
    } else {
      this.sql = statementsFor('postgres');
      this.rows = async (sql, params) =>
        (await pets.query<Record<string, unknown>[]>(sql, params)).map((row) => Object.values(row));
    }
  }

  async findPage({ afterId, status, limit }: PetPageQuery): Promise<PetEntity[]> {
    const rows = status
      ? await this.rows(this.sql.pageWithStatus, [status, afterId, limit])
      : await this.rows(this.sql.page, [afterId, limit]);
    return rows.map(toPetEntity);
  }

  async findById(id: number): Promise<PetEntity | null> {
    const [row] = await this.rows(this.sql.byId, [id]);
    return row ? toPetEntity(row) : null;
  }

  async insert(pet: Omit<PetEntity, 'id'>): Promise<PetEntity> {
    const [[id]] = await this.rows(this.sql.insert, [pet.name, pet.categoryId, pet.status]);
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
    const [row] = await this.rows(this.sql.insertClaimed, [
      pet.name,
      pet.categoryId,
      pet.status,
      claim.apiKeyId,
      claim.key,
      claim.requestHash,
      claim.expiresAt,
    ]);
    return row ? { ...pet, id: Number(row[0]) } : undefined;
  }

  async findClaimed(apiKeyId: number, key: string): Promise<ClaimedPet | undefined> {
    const [row] = await this.rows(this.sql.byClaim, [apiKeyId, key]);
    return row
      ? { pet: toPetEntity(row), requestHash: row[4] as string, expiresAt: Number(row[5]) }
      : undefined;
  }

  /** Frees one key if it expired at or before `now`; the pet itself stays. */
  async releaseExpiredClaim(apiKeyId: number, key: string, now: number): Promise<void> {
    await this.rows(this.sql.releaseExpiredClaim, [apiKeyId, key, now]);
  }

  async releaseAllExpiredClaims(now: number): Promise<void> {
    await this.rows(this.sql.releaseAllExpiredClaims, [now]);
  }
}

/**
 * Runs one of the constant statements below; rows as arrays, in select-list order. Only a SELECT or
 * RETURNING result is meaningful: for an UPDATE, TypeORM's PostgreSQL runner returns
 * `[rows, rowCount]`, not rows, and callers ignore what comes back.
 */
type RunStatement = (sql: string, params: unknown[]) => Promise<unknown[][]>;

/**
 * SQLite: better-sqlite3's own prepared statements on TypeORM's connection, in raw mode. A row as
 * an array costs far less to build than a row as an object, and the list path builds 21 per page.
 */
function sqliteStatements(db: Database): RunStatement {
  const prepared = new Map<string, Statement<unknown[], unknown[]>>();
  const statement = (sql: string) => {
    let found = prepared.get(sql);
    if (!found) {
      found = db.prepare<unknown[], unknown[]>(sql);
      if (found.reader) found.raw();
      prepared.set(sql, found);
    }
    return found;
  };
  const run = (sql: string, params: unknown[]): unknown[][] => {
    const found = statement(sql);
    if (found.reader) return found.all(...params);
    found.run(...params);
    return [];
  };
  // The executor turns a driver error into a rejection, as TypeORM's query() would.
  return (sql, params) => new Promise((resolve) => resolve(run(sql, params)));
}

/** A row as the drivers return it: PostgreSQL hands `bigint` over as a string. */
type PetRow = [
  id: number | string,
  name: string,
  categoryId: number | string,
  status: PetStatus | null,
];

/** Ids and category ids are bounded to Number.MAX_SAFE_INTEGER by validation, so Number() is exact. */
function toPetEntity(row: unknown[]): PetEntity {
  const [id, name, categoryId, status] = row as PetRow;
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
      `SELECT ${COLUMNS}, idempotency_request_hash, idempotency_expires_at
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
