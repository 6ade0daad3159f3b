// The PostgreSQL side of the reference: the service's tables (src/database/migrations) through a `pg`
// pool of the service's size, every statement a named prepared statement (parsed once per
// connection), rows as arrays (bigint columns as strings, which the answers print as they are).
// Same answers as store.mjs, asynchronously; a key verified in the last VERIFIED_KEY_TTL_MS is
// trusted without a query, so most requests make one round trip.
import pg from 'pg';
import { categoryEventRow, petEventRow } from './rules.mjs';
import { createVerifiedKeys } from './verified-keys.mjs';

/** TypeORM's pool size in the service (src/database/data-source.ts). */
const POOL_SIZE = 10;

const PAGE_ALL = {
  name: 'page_all',
  text: 'SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2',
};
const PAGE_BY_STATUS = {
  name: 'page_by_status',
  text: 'SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3',
};
const BY_ID = {
  name: 'by_id',
  text: 'SELECT id, name, category_id, status, revision FROM pets WHERE id = $1',
};
/** The row, locked until the transaction ends (src/database/postgres-sql-runner.ts rowLock). */
const LOCK_BY_ID = {
  name: 'lock_by_id',
  text: 'SELECT id, name, category_id, status, revision FROM pets WHERE id = $1 FOR UPDATE',
};
/**
 * A change and its event in one statement, as the service writes them on PostgreSQL
 * (src/pets/pets.repository.ts): the pet's JSON gets the id the INSERT returns.
 */
const UPDATE_WITH_EVENT = {
  name: 'update_with_event',
  text: `WITH pet AS (
    UPDATE pets SET name = $1, category_id = $2, status = $3, revision = revision + 1 WHERE id = $4 RETURNING id, revision
  ), event AS (
    INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous)
    SELECT $5, $6::timestamptz, pet.id, $7::text, $8::text FROM pet
  ) SELECT revision FROM pet`,
};
const INSERT_WITH_EVENT = {
  name: 'insert_with_event',
  text: `WITH pet AS (
    INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id
  ), event AS (
    INSERT INTO pet_events (type, occurred_at, pet_id, pet)
    SELECT 'pet.created', $4::timestamptz, pet.id, '{"id":' || pet.id || $5::text FROM pet
  ) SELECT id FROM pet`,
};
/** The JSON of the pet without its leading `{"id":<id>`, for INSERT_WITH_EVENT to complete. */
const afterId = (name, categoryId, status) =>
  petEventRow('pet.created', [0, name, categoryId, status])[3].slice('{"id":0'.length);
/** An open order holds its pet. The reference expires no lapsed hold: the bench holds no pets. */
const HELD = {
  name: 'held',
  text: "SELECT pet_id FROM orders WHERE pet_id = $1 AND status = 'open'",
};
/** The pet and its pet.deleted event in one statement. */
const DELETE_WITH_EVENT = {
  name: 'delete_with_event',
  text: `WITH pet AS (
    DELETE FROM pets WHERE id = $1 RETURNING id
  ), event AS (
    INSERT INTO pet_events (type, occurred_at, pet_id, pet)
    SELECT 'pet.deleted', $2::timestamptz, pet.id, $3::text FROM pet
  ) SELECT id FROM pet`,
};
const LOCK_CATEGORY = {
  name: 'lock_category',
  text: 'SELECT id, name, revision FROM categories WHERE id = $1 FOR UPDATE',
};
/**
 * A never-named id, named, with its category.updated event, in one statement; no row when a
 * concurrent transaction added the id first (then the transaction starts again on that row).
 */
const INSERT_CATEGORY_WITH_EVENT = {
  name: 'insert_category_with_event',
  text: `WITH category AS (
    INSERT INTO categories (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING revision
  ), event AS (
    INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous)
    SELECT $3, $4::timestamptz, $1, $5::text, $6::text FROM category
  ) SELECT revision FROM category`,
};
/** The locked row renamed (or named again after a delete), with its category.updated event. */
const RENAME_CATEGORY_WITH_EVENT = {
  name: 'rename_category_with_event',
  text: `WITH category AS (
    UPDATE categories SET name = $2, revision = revision + 1 WHERE id = $1 RETURNING revision
  ), event AS (
    INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous)
    SELECT $3, $4::timestamptz, $1, $5::text, $6::text FROM category
  ) SELECT revision FROM category`,
};
/** A PUT of a new id meets a concurrent PUT of that id at most once: then the row exists. */
const PUT_CATEGORY_ATTEMPTS = 3;
const UNIQUE_VIOLATION = '23505';
const KEY_BY_PREFIX = {
  name: 'key_by_prefix',
  text: 'SELECT key_hash, revoked_at, scopes FROM api_keys WHERE prefix = $1',
};

export function openPgStore(url) {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    application_name: 'reference',
  });
  const rows = (statement, values) =>
    pool.query({ ...statement, values, rowMode: 'array' }).then((result) => result.rows);
  /** `work` between BEGIN and COMMIT on one connection of the pool; ROLLBACK when it throws. */
  const inTransaction = async (work) => {
    const client = await pool.connect();
    let broken;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded rather than returned to the pool.
      await client.query('ROLLBACK').catch((rollbackError) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  };
  const keys = createVerifiedKeys((prefix) =>
    pool.query({ ...KEY_BY_PREFIX, values: [prefix] }).then((result) => result.rows[0]),
  );

  return {
    /** Up to `take` rows [id, name, category_id, status] after `afterId`, ascending. */
    page: (afterId, status, take) =>
      status === undefined
        ? rows(PAGE_ALL, [afterId, take])
        : rows(PAGE_BY_STATUS, [status, afterId, take]),
    /** The row [id, name, category_id, status, revision] of pet `id`, or undefined. */
    byId: (id) => rows(BY_ID, [id]).then((found) => found[0]),
    /** Stores a pet and its pet.created event in one statement and resolves to its id. */
    insert: async (name, categoryId, status) => {
      const values = [name, categoryId, status, new Date().toISOString()];
      const [[id]] = await rows(INSERT_WITH_EVENT, [...values, afterId(name, categoryId, status)]);
      return id;
    },
    /**
     * updatePet's transaction, as store.mjs's update, on one connection of the pool: a stored row
     * writes its pet.updated event before COMMIT.
     */
    update: (id, decide) =>
      inTransaction(async (client) => {
        const locked = await client.query({ ...LOCK_BY_ID, values: [id], rowMode: 'array' });
        const row = locked.rows[0];
        const next = decide(row);
        if (next !== row && Array.isArray(next)) {
          const [type, occurredAt, , pet, previous] = petEventRow('pet.updated', next, row);
          const values = [next[1], next[2], next[3], id, type, occurredAt, pet, previous];
          const updated = await client.query({ ...UPDATE_WITH_EVENT, values, rowMode: 'array' });
          next[4] = updated.rows[0][0];
        }
        return next;
      }),
    /** deletePet's transaction, as store.mjs's remove, on one connection of the pool. */
    remove: (id, refuse) =>
      inTransaction(async (client) => {
        const locked = await client.query({ ...LOCK_BY_ID, values: [id], rowMode: 'array' });
        const row = locked.rows[0];
        const held =
          row !== undefined && (await client.query({ ...HELD, values: [id] })).rows.length > 0;
        const refusal = refuse(row, held);
        if (refusal !== undefined) return refusal;
        const [, occurredAt, , pet] = petEventRow('pet.deleted', row);
        await client.query({ ...DELETE_WITH_EVENT, values: [id, occurredAt, pet] });
        return undefined;
      }),
    /** putCategory's transaction, as store.mjs's putCategory, on one connection of the pool. */
    putCategory: async (id, name, refuse) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const outcome = await inTransaction((client) => nameCategory(client, id, name, refuse));
          if (outcome !== null) return outcome;
        } catch (error) {
          if (error?.code === UNIQUE_VIOLATION) return undefined;
          throw error;
        }
        if (attempt === PUT_CATEGORY_ATTEMPTS)
          throw new Error(`category ${id} was added by another transaction ${attempt} times`);
      }
    },
    ping: () => pool.query('SELECT 1'),
    close: () => pool.end(),
    /** The scopes of `key`, or a promise of them, when it is a known, unrevoked key; else false. */
    authenticate: keys.authenticate,
    isUnavailable,
  };
}

/**
 * One attempt of putCategory: the answer or refusal, or null when a concurrent transaction added
 * the id first. A name another category has fails the statement (the UNIQUE constraint).
 */
async function nameCategory(client, id, name, refuse) {
  const locked = await client.query({ ...LOCK_CATEGORY, values: [id], rowMode: 'array' });
  const row = locked.rows[0];
  // A deleted category keeps its row without a name (src/categories/category.entity.ts).
  const current = row?.[1] == null ? undefined : row;
  const refusal = refuse(current);
  if (refusal !== undefined) return refusal;
  if (current?.[1] === name) return [id, name, current[2], false];
  const statement = row === undefined ? INSERT_CATEGORY_WITH_EVENT : RENAME_CATEGORY_WITH_EVENT;
  const [type, occurredAt, , category, previous] = categoryEventRow(id, name, current?.[1]);
  const values = [id, name, type, occurredAt, category, previous];
  const written = await client.query({ ...statement, values, rowMode: 'array' });
  if (written.rows.length === 0) return null;
  return [id, name, written.rows[0][0], current === undefined];
}

/** Errors that mean "cannot serve now" rather than a bug (src/database/database-errors.ts). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

function isUnavailable(error) {
  const code = error?.code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08')))
    return true;
  return /connection terminated|timeout exceeded when trying to connect/i.test(error?.message);
}
