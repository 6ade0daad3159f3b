// The PostgreSQL side of the reference: the service's tables (src/database/migrations) through a `pg`
// pool of the service's size, every statement a named prepared statement (parsed once per
// connection), rows as arrays (bigint columns as strings, which the answers print as they are).
// Same answers as store.mjs, asynchronously; a key verified in the last VERIFIED_KEY_TTL_MS is
// trusted without a query, so most requests make one round trip.
import pg from 'pg';
import { categoryEventRow, orderJsonAfterId, petEventRow } from './rules.mjs';
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

// Orders: each change one statement, the order, its pet and both events (src/orders/
// orders.repository.ts), guarded by conditional updates as the service's are, so no lock is taken.

/** A time as the Order's JSON has it: toISOString's form, in UTC with milliseconds. */
const iso = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The JSON of a closed order, from the columns its UPDATE returns (orderJsonAfterId's form). */
const CLOSED_ORDER_JSON = `'{"id":' || id || ',"petId":' || pet_id || ',"status":"' || status ||
  '","createdAt":"' || ${iso('created_at')} || '","expiresAt":"' || ${iso('expires_at')} ||
  '","closedAt":"' || ${iso('closed_at')} || '"}'`;
/** The pet's JSON after an order changed it (to_json escapes a string as JSON.stringify does). */
const PET_JSON = `'{"id":' || pet.id || ',"name":' || to_json(pet.name)::text || ',"categoryId":' ||
  pet.category_id || ',"status":"' || pet.status || '"}'`;
/** The order's event, then the pet's pet.updated with the status it had before. */
const orderEvents = (order, type, orderJson, previousStatus) => `INSERT INTO pet_events
    (type, occurred_at, pet_id, pet, previous)
    SELECT e.type, $2::timestamptz, pet.id, e.pet, e.previous FROM ${order}, pet,
    LATERAL (VALUES (1, '${type}', ${orderJson}, NULL),
      (2, 'pet.updated', ${PET_JSON}, '{"status":"${previousStatus}"}')) AS e(n, type, pet, previous)
    ORDER BY e.n`;
/**
 * Holds pet $1 if it is available and opens its order from $2 to $3; $4 is the Order's JSON after
 * its id. No row when the pet was not available as the row was written.
 */
const PLACE_ORDER = {
  name: 'place_order',
  text: `WITH pet AS (
    UPDATE pets SET status = 'pending', revision = revision + 1
    WHERE id = $1 AND status = 'available' RETURNING id, name, category_id, status
  ), placed AS (
    INSERT INTO orders (pet_id, status, created_at, expires_at)
    SELECT id, 'open', $2::timestamptz, $3::timestamptz FROM pet RETURNING id
  ), event AS (
    ${orderEvents('placed', 'order.created', `'{"id":' || placed.id || $4::text`, 'available')}
  ) SELECT id FROM placed`,
};
/** Completes order $1 if it is open and $2 is before its deadline, its pet sold; the Order's JSON. */
const COMPLETE_ORDER = {
  name: 'complete_order',
  text: `WITH closed AS (
    UPDATE orders SET status = 'completed', closed_at = $2::timestamptz, revision = revision + 1
    WHERE id = $1 AND status = 'open' AND expires_at > $2::timestamptz
    RETURNING id, pet_id, ${CLOSED_ORDER_JSON} AS json
  ), pet AS (
    UPDATE pets SET status = 'sold', revision = pets.revision + 1 FROM closed
    WHERE pets.id = closed.pet_id RETURNING pets.id, pets.name, pets.category_id, pets.status
  ), event AS (
    ${orderEvents('closed', 'order.completed', 'closed.json', 'pending')}
  ) SELECT json FROM closed`,
};
/** Expires order $1 if it is open and its deadline is at or before $2, its pet available again. */
const EXPIRE_ORDER = {
  name: 'expire_order',
  text: `WITH closed AS (
    UPDATE orders SET status = 'expired', closed_at = expires_at, revision = revision + 1
    WHERE id = $1 AND status = 'open' AND expires_at <= $2::timestamptz
    RETURNING id, pet_id, status, created_at, expires_at, closed_at, revision,
      ${CLOSED_ORDER_JSON} AS json
  ), pet AS (
    UPDATE pets SET status = 'available', revision = pets.revision + 1 FROM closed
    WHERE pets.id = closed.pet_id RETURNING pets.id, pets.name, pets.category_id, pets.status
  ), event AS (
    ${orderEvents('closed', 'order.expired', 'closed.json', 'pending')}
  ) SELECT id, pet_id, status, created_at, expires_at, closed_at, revision FROM closed`,
};
const ORDER_BY_ID = {
  name: 'order_by_id',
  text: 'SELECT id, pet_id, status, created_at, expires_at, closed_at, revision FROM orders WHERE id = $1',
};
const OPEN_ORDER_OF_PET = {
  name: 'open_order_of_pet',
  text: "SELECT id, expires_at FROM orders WHERE pet_id = $1 AND status = 'open'",
};
const PET_STATUS = { name: 'pet_status', text: 'SELECT status FROM pets WHERE id = $1' };
/** An order row as an open one is, for asking before the update whether it may complete. */
const openOrder = (id) => [id, null, 'open', null, null, null, 1];

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
    /**
     * createOrder, as store.mjs's placeOrder, in the service's steps: the hold in one statement;
     * when the pet could not be held, a hold that lapsed by $2 is expired in one more and the
     * pet held again; else the refusal from the pet as read after.
     */
    placeOrder: async (petId, createdAt, expiresAt, refuse) => {
      const after = orderJsonAfterId(petId, 'open', createdAt, expiresAt, null);
      const place = async () => {
        const [placed] = await rows(PLACE_ORDER, [petId, createdAt, expiresAt, after]);
        return placed && [placed[0], `{"id":${placed[0]}${after}`];
      };
      const placed = await place();
      if (placed !== undefined) return placed;
      const [lapsed] = await rows(OPEN_ORDER_OF_PET, [petId]);
      if (lapsed !== undefined && lapsed[1] <= new Date(createdAt)) {
        await rows(EXPIRE_ORDER, [lapsed[0], createdAt]);
        const again = await place();
        if (again !== undefined) return again;
      }
      const [pet] = await rows(PET_STATUS, [petId]);
      const held = pet?.[0] === 'pending' && (await rows(OPEN_ORDER_OF_PET, [petId])).length > 0;
      return refuse(pet?.[0], held);
    },
    /**
     * completeOrder, as store.mjs's, in the service's steps: one statement completes an open
     * order before its deadline (tried first when `refuse` lets an open order be completed);
     * otherwise the order is read, expired in a statement of its own when it lapsed by `now`,
     * and `refuse` decides; a completion that another change beat reads the order again.
     */
    completeOrder: async (id, now, refuse) => {
      if (refuse(openOrder(id)) === undefined) {
        const [completed] = await rows(COMPLETE_ORDER, [id, now]);
        if (completed !== undefined) return [id, completed[0]];
      }
      for (;;) {
        let [order] = await rows(ORDER_BY_ID, [id]);
        if (order?.[2] === 'open' && order[4] <= new Date(now)) {
          const [expired] = await rows(EXPIRE_ORDER, [id, now]);
          order = expired ?? (await rows(ORDER_BY_ID, [id]))[0];
        }
        const refusal = refuse(order);
        if (refusal !== undefined) return refusal;
        const [completed] = await rows(COMPLETE_ORDER, [id, now]);
        if (completed !== undefined) return [id, completed[0]];
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
