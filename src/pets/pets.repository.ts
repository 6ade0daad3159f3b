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

const COLUMNS = 'id, name, category_id AS "categoryId", status';

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
}

/** A row as the drivers return it: PostgreSQL hands `bigint` over as a string. */
interface PetRow {
  id: number | string;
  name: string;
  categoryId: number | string;
  status: PetStatus | null;
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
  };
}

function numberPlaceholders(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}
