import { Injectable } from '@nestjs/common';
import { type Row, SqlRunner, type SqlTransaction } from '../database/sql-runner.js';
import { PET_JSON_BEFORE_ID, petJson, petJsonAfterId } from '../events/event-json.js';
import type { PetEventRecord } from '../events/pet-event.js';
import type { IdempotencyKeyEntity } from './idempotency-key.entity.js';
import type { PetEntity } from './pet.entity.js';
import type { PetStatus } from './pet-status.js';

export interface PetPageQuery {
  /** Only pets with a greater id: keyset pagination, so page N costs what page 1 costs. */
  afterId: number;
  status?: PetStatus;
  limit: number;
}

export type NewPetRow = Omit<PetEntity, 'id' | 'revision'>;

/** A claim with the pet it made. */
export interface ClaimedPet {
  pet: PetEntity;
  requestHash: string;
  expiresAt: Date;
}

const PET_COLUMNS = 'p.id, p.name, p.category_id, p.status, p.revision';

/**
 * The statements, each written once; the runner gives each its engine's placeholders once, here,
 * so each text is constant: SQLite prepares it once and PostgreSQL caches its plan.
 */
function statements(db: SqlRunner) {
  return {
    page: db.statement<{ afterId: number; limit: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id > :afterId ORDER BY p.id LIMIT :limit`,
    ),
    pageWithStatus: db.statement<{ status: PetStatus; afterId: number; limit: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p
      WHERE p.status = :status AND p.id > :afterId ORDER BY p.id LIMIT :limit`,
    ),
    byId: db.statement<{ id: number }>(`SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = :id`),
    lockById: db.lockingStatement<{ id: number }>(
      `SELECT ${PET_COLUMNS} FROM pets p WHERE p.id = :id`,
    ),
    ...changeStatements(db),
    ...claimStatements(db),
  };
}

type PetFields = Omit<PetEntity, 'revision'>;

interface EventParameters {
  occurredAt: string;
  traceContext: string | null;
}

/**
 * Each change writes its pet and its event (docs/events.md, "Nothing lost"). On PostgreSQL that is
 * one statement, so a create needs no transaction of its own and an update no extra round trip
 * (docs/performance.md, "The event write"); SQLite has no INSERT in a WITH, so there it is two
 * statements, which a transaction must hold together.
 */
function changeStatements(db: SqlRunner) {
  return {
    insertEvent: db.statement<
      EventParameters & { type: string; petId: number; pet: string; previous: string | null }
    >(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      VALUES (:type, :occurredAt, :petId, :pet, :previous, :traceContext)`,
    ),
    insert: db.statement<NewPetRow>(
      'INSERT INTO pets (name, category_id, status) VALUES (:name, :categoryId, :status) RETURNING id',
    ),
    update: db.statement<PetFields>(
      `UPDATE pets SET name = :name, category_id = :categoryId, status = :status,
      revision = revision + 1 WHERE id = :id RETURNING revision`,
    ),
    insertWithEvent: db.statement<NewPetRow & EventParameters & { petAfterId: string }>(
      `WITH pet AS (
        INSERT INTO pets (name, category_id, status) VALUES (:name, :categoryId, :status) RETURNING id
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, trace_context)
        SELECT 'pet.created', :occurredAt::timestamptz, pet.id,
          '${PET_JSON_BEFORE_ID}' || pet.id || :petAfterId::text, :traceContext::text FROM pet
      )
      SELECT id FROM pet`,
    ),
    updateWithEvent: db.statement<PetFields & EventParameters & { pet: string; previous: string }>(
      `WITH pet AS (
        UPDATE pets SET name = :name, category_id = :categoryId, status = :status,
        revision = revision + 1 WHERE id = :id RETURNING id, revision
      ), event AS (
        INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
        SELECT 'pet.updated', :occurredAt::timestamptz, pet.id, :pet::text, :previous::text,
          :traceContext::text FROM pet
      )
      SELECT revision FROM pet`,
    ),
  };
}

function claimStatements(db: SqlRunner) {
  return {
    insertClaim: db.statement<{
      apiKeyId: number;
      key: string;
      requestHash: string;
      petId: number;
      expiresAt: string;
    }>(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, pet_id, expires_at)
      VALUES (:apiKeyId, :key, :requestHash, :petId, :expiresAt) ON CONFLICT DO NOTHING RETURNING pet_id`,
    ),
    claimedPet: db.statement<{ apiKeyId: number; key: string }>(
      `SELECT ${PET_COLUMNS}, k.request_hash, k.expires_at
      FROM idempotency_keys k JOIN pets p ON p.id = k.pet_id
      WHERE k.api_key_id = :apiKeyId AND k.key = :key`,
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

/** All SQL on `pets` and `idempotency_keys`, and the inserts of the events pets' changes write. */
@Injectable()
export class PetsRepository {
  private readonly sql: ReturnType<typeof statements>;
  private readonly postgres: boolean;

  constructor(private readonly db: SqlRunner) {
    this.sql = statements(db);
    this.postgres = db.driver.options.type === 'postgres';
  }

  async findPage({ afterId, status, limit }: PetPageQuery): Promise<PetEntity[]> {
    const rows = status
      ? await this.db.readStatement(this.sql.pageWithStatus, { status, afterId, limit })
      : await this.db.readStatement(this.sql.page, { afterId, limit });
    return rows.map(toPetEntity);
  }

  async findById(id: number): Promise<PetEntity | null> {
    const [row] = await this.db.readStatement(this.sql.byId, { id });
    return row ? toPetEntity(row) : null;
  }

  /** Runs `work` in one transaction on the primary: everything it writes commits, or nothing. */
  transaction<T>(work: (transaction: SqlTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The pet, its row locked until `transaction` ends, so no other change interleaves. */
  async lockById(transaction: SqlTransaction, id: number): Promise<PetEntity | null> {
    const { lockById } = this.sql;
    const [row] = await transaction.query(lockById.text, lockById.values({ id }));
    return row ? toPetEntity(row) : null;
  }

  /** Creates the pet with its pet.created event; atomic on its own. */
  async create(pet: NewPetRow, event: PetEventRecord): Promise<PetEntity> {
    if (!this.postgres)
      return this.db.transaction((transaction) => this.insert(transaction, pet, event));
    const [row] = await this.db.write(
      this.sql.insertWithEvent.text,
      this.insertWithEventValues(pet, event),
    );
    return { ...pet, id: Number(row.id), revision: 1 };
  }

  /** Creates the pet with its pet.created event inside `transaction`. */
  async insert(
    transaction: SqlTransaction,
    pet: NewPetRow,
    event: PetEventRecord,
  ): Promise<PetEntity> {
    const { insert, insertWithEvent, insertEvent } = this.sql;
    if (this.postgres) {
      const values = this.insertWithEventValues(pet, event);
      const [row] = await transaction.query(insertWithEvent.text, values);
      return { ...pet, id: Number(row.id), revision: 1 };
    }
    const [row] = await transaction.query(insert.text, insert.values(pet));
    const created = { ...pet, id: Number(row.id), revision: 1 };
    await transaction.query(
      insertEvent.text,
      insertEvent.values({
        ...eventParameters(event),
        type: 'pet.created',
        petId: created.id,
        pet: petJson(created),
        previous: null,
      }),
    );
    return created;
  }

  private insertWithEventValues(pet: NewPetRow, event: PetEventRecord): unknown[] {
    const petAfterId = petJsonAfterId(pet);
    return this.sql.insertWithEvent.values({ ...pet, ...eventParameters(event), petAfterId });
  }

  /**
   * Stores the pet's new fields, gives it the next revision and writes its pet.updated event; the
   * row must be locked.
   */
  async update(
    transaction: SqlTransaction,
    pet: PetFields,
    event: PetEventRecord,
  ): Promise<PetEntity> {
    const { update, updateWithEvent, insertEvent } = this.sql;
    const eventValues = {
      ...eventParameters(event),
      pet: petJson(pet),
      previous: JSON.stringify(event.previous ?? {}),
    };
    if (this.postgres) {
      const [row] = await transaction.query(
        updateWithEvent.text,
        updateWithEvent.values({ ...pet, ...eventValues }),
      );
      return { ...pet, revision: Number(row.revision) };
    }
    const [row] = await transaction.query(update.text, update.values(pet));
    await transaction.query(
      insertEvent.text,
      insertEvent.values({ ...eventValues, type: 'pet.updated', petId: pet.id }),
    );
    return { ...pet, revision: Number(row.revision) };
  }

  /**
   * Claims the Idempotency-Key for the pet; false, claiming nothing, when this API key already
   * claimed it. The claim's primary key decides, not a prior lookup, so concurrent retries on any
   * number of instances claim it once.
   */
  async claim(transaction: SqlTransaction, claim: IdempotencyKeyEntity): Promise<boolean> {
    const { insertClaim } = this.sql;
    const claimed = await transaction.query(
      insertClaim.text,
      insertClaim.values({ ...claim, expiresAt: claim.expiresAt.toISOString() }),
    );
    return claimed.length > 0;
  }

  /** Read from the primary: the claim may have been committed a moment ago by another instance. */
  async findClaimedPet(apiKeyId: number, key: string): Promise<ClaimedPet | undefined> {
    const [row] = await this.db.writeStatement(this.sql.claimedPet, { apiKeyId, key });
    if (!row) return undefined;
    return {
      pet: toPetEntity(row),
      requestHash: row.request_hash as string,
      expiresAt: new Date(row.expires_at as Date | string),
    };
  }

  /** Frees one key if it expired at or before `now`; the pet stays. */
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
    revision: Number(row.revision),
  };
}

function eventParameters({ occurredAt, traceContext }: PetEventRecord): EventParameters {
  return { occurredAt: occurredAt.toISOString(), traceContext };
}
