// The SQLite side of the reference: the service's own tables (src/database/migrations), opened as
// the service opens them (WAL, 5 s busy timeout), every statement prepared once at start.
import { Database } from '../lib/better-sqlite3.mjs';
import { categoryEventRow, orderEventRows, orderJson, petEventRow } from './rules.mjs';
import { createVerifiedKeys } from './verified-keys.mjs';

export function openStore(path) {
  // fileMustExist: the service has migrated and seeded this file; the reference creates nothing.
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  db.pragma('journal_mode = WAL');

  // raw(): rows as arrays, so no object per row is built only to be taken apart again.
  const pageAll = db
    .prepare('SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?')
    .raw();
  const pageByStatus = db
    .prepare(
      'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?',
    )
    .raw();
  const byId = db
    .prepare('SELECT id, name, category_id, status, revision FROM pets WHERE id = ?')
    .raw();
  const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)');
  const update = db
    .prepare(
      'UPDATE pets SET name = ?, category_id = ?, status = ?, revision = revision + 1 WHERE id = ? RETURNING revision',
    )
    .pluck();
  const insertEvent = db.prepare(
    'INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous) VALUES (?, ?, ?, ?, ?)',
  );
  // An open order holds its pet. The reference expires no lapsed hold: the bench holds no pets.
  const held = db.prepare("SELECT pet_id FROM orders WHERE pet_id = ? AND status = 'open'").pluck();
  const remove = db.prepare('DELETE FROM pets WHERE id = ?');
  const categoryById = db.prepare('SELECT id, name, revision FROM categories WHERE id = ?').raw();
  const insertCategory = db
    .prepare('INSERT INTO categories (id, name) VALUES (?, ?) RETURNING revision')
    .pluck();
  const renameCategory = db
    .prepare(
      'UPDATE categories SET name = ?, revision = revision + 1 WHERE id = ? RETURNING revision',
    )
    .pluck();
  // Orders: rows [id, pet_id, status, created_at, expires_at, closed_at, revision], times as the
  // ISO text the service stores, so comparing them as text compares the instants.
  const orderColumns = 'id, pet_id, status, created_at, expires_at, closed_at, revision';
  // The hold: the pet changes only if it is still available (src/orders/orders.repository.ts).
  const holdPet = db
    .prepare(
      "UPDATE pets SET status = 'pending', revision = revision + 1 WHERE id = ? AND status = 'available' RETURNING id, name, category_id, status",
    )
    .raw();
  const setPetStatus = db
    .prepare(
      'UPDATE pets SET status = ?, revision = revision + 1 WHERE id = ? RETURNING id, name, category_id, status',
    )
    .raw();
  const insertOrder = db.prepare(
    "INSERT INTO orders (pet_id, status, created_at, expires_at) VALUES (?, 'open', ?, ?)",
  );
  const orderById = db.prepare(`SELECT ${orderColumns} FROM orders WHERE id = ?`).raw();
  const openOrderOfPet = db
    .prepare(`SELECT ${orderColumns} FROM orders WHERE pet_id = ? AND status = 'open'`)
    .raw();
  const completeOrder = db
    .prepare(
      `UPDATE orders SET status = 'completed', closed_at = ?, revision = revision + 1 WHERE id = ? RETURNING ${orderColumns}`,
    )
    .raw();
  // An expired order's closed_at is its deadline (src/orders/order.entity.ts).
  const expireOrder = db
    .prepare(
      `UPDATE orders SET status = 'expired', closed_at = expires_at, revision = revision + 1 WHERE id = ? RETURNING ${orderColumns}`,
    )
    .raw();
  const keyByPrefix = db.prepare(
    'SELECT key_hash, revoked_at, scopes FROM api_keys WHERE prefix = ?',
  );
  const ping = db.prepare('SELECT 1').pluck();

  const keys = createVerifiedKeys((prefix) => keyByPrefix.get(prefix));

  // BEGIN IMMEDIATE takes the write lock before the read, as the service's transaction does
  // (src/database/sqlite-sql-runner.ts): no other change can come between the check and the write.
  // Every change writes its event in its own transaction (src/pets/pets.service.ts,
  // src/events/pet-events.repository.ts append): both commit or neither.
  const change = db.transaction((id, decide) => {
    const row = byId.get(id);
    const next = decide(row);
    if (next === row || !Array.isArray(next)) return next;
    next[4] = update.get(next[1], next[2], next[3], id);
    insertEvent.run(petEventRow('pet.updated', next, row));
    return next;
  });
  const removal = db.transaction((id, refuse) => {
    const row = byId.get(id);
    const refusal = refuse(row, row !== undefined && held.get(id) !== undefined);
    if (refusal !== undefined) return refusal;
    remove.run(id);
    insertEvent.run(petEventRow('pet.deleted', row));
    return undefined;
  });
  const naming = db.transaction((id, name, refuse) => {
    const row = categoryById.get(id);
    // A deleted category keeps its row without a name (src/categories/category.entity.ts).
    const current = row?.[1] == null ? undefined : row;
    const refusal = refuse(current);
    if (refusal !== undefined) return refusal;
    if (current?.[1] === name) return [id, name, current[2], false];
    const revision =
      row === undefined ? insertCategory.get(id, name) : renameCategory.get(name, id);
    insertEvent.run(categoryEventRow(id, name, current?.[1]));
    return [id, name, revision, current === undefined];
  });
  /** An order's change: the order's event with the Order's JSON, then its pet's pet.updated. */
  const writeOrderEvents = (type, json, pet, now) => {
    for (const row of orderEventRows(type, json, pet, now)) insertEvent.run(row);
  };
  /** Ends the lapsed open order `id`, its pet available again, as the service's expiry does. */
  const expire = (id, now) => {
    const order = expireOrder.get(id);
    const pet = setPetStatus.get('available', order[1]);
    writeOrderEvents('order.expired', orderJson(order), pet, now);
    return order;
  };
  const placing = db.transaction((petId, createdAt, expiresAt, refuse) => {
    let pet = holdPet.get(petId);
    let open;
    if (pet === undefined) {
      // A hold past its deadline ends first; then the pet is ordered again.
      open = openOrderOfPet.get(petId);
      if (open !== undefined && open[4] <= createdAt) {
        expire(open[0], createdAt);
        open = undefined;
        pet = holdPet.get(petId);
      }
    }
    if (pet === undefined) {
      const status = byId.get(petId)?.[3];
      return refuse(status, status === 'pending' && open !== undefined);
    }
    const id = Number(insertOrder.run(petId, createdAt, expiresAt).lastInsertRowid);
    const json = orderJson([id, petId, 'open', createdAt, expiresAt, null]);
    writeOrderEvents('order.created', json, pet, createdAt);
    return [id, json];
  });
  const completing = db.transaction((id, now, refuse) => {
    let order = orderById.get(id);
    // An open order past its deadline answers as the expired order it becomes.
    if (order?.[2] === 'open' && order[4] <= now) order = expire(id, now);
    const refusal = refuse(order);
    if (refusal !== undefined) return refusal;
    const completed = completeOrder.get(now, id);
    const json = orderJson(completed);
    writeOrderEvents('order.completed', json, setPetStatus.get('sold', completed[1]), now);
    return [id, json];
  });
  const create = db.transaction((name, categoryId, status) => {
    const id = Number(insert.run(name, categoryId, status).lastInsertRowid);
    insertEvent.run(petEventRow('pet.created', [id, name, categoryId, status]));
    return id;
  });

  return {
    /** Up to `take` rows [id, name, category_id, status] after `afterId`, ascending. */
    page: (afterId, status, take) =>
      status === undefined ? pageAll.all(afterId, take) : pageByStatus.all(status, afterId, take),
    /** The row [id, name, category_id, status, revision] of pet `id`, or undefined. */
    byId: (id) => byId.get(id),
    /** Stores a pet and its pet.created event in one transaction, and returns its id. */
    insert: (name, categoryId, status) => create.immediate(name, categoryId, status),
    /**
     * updatePet's transaction (src/pets/pets.service.ts update): `decide` gets the pet's row, or
     * undefined, and returns the row to store (the revision is the store's to bump), the row itself
     * to leave the pet as it is, or a refusal; the stored row, the row or the refusal comes back.
     * A stored row writes its pet.updated event in the same transaction; the others write nothing.
     */
    update: (id, decide) => change.immediate(id, decide),
    /**
     * deletePet's transaction (src/pets/pets.service.ts delete): `refuse` gets the pet's row, or
     * undefined, and whether an order holds it, and returns a refusal or undefined; without one
     * the pet goes with its pet.deleted event. The refusal, or undefined, comes back.
     */
    remove: (id, refuse) => removal.immediate(id, refuse),
    /**
     * putCategory's transaction (src/categories/categories.service.ts put): `refuse` gets the
     * category's row [id, name, revision] while it has a name, else undefined, and returns a
     * refusal or undefined. Without one, the category as answered comes back,
     * [id, name, revision, created], its category.updated event written with it unless the name
     * was already its own; undefined when another category has the name (the UNIQUE constraint).
     */
    putCategory: (id, name, refuse) => {
      try {
        return naming.immediate(id, name, refuse);
      } catch (error) {
        if (error?.code === 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
        throw error;
      }
    },
    /**
     * createOrder's transaction (src/orders/orders.service.ts place): the pet held if available,
     * the order open from `createdAt` to `expiresAt` (ISO text), order.created and pet.updated.
     * A pet whose hold lapsed by `createdAt` is released first, with order.expired and
     * pet.updated. Otherwise `refuse` gets the pet's status (null: none; undefined: no such pet)
     * and whether an open order holds it, and its refusal comes back; [id, the Order's JSON] when
     * the order was placed.
     */
    placeOrder: (petId, createdAt, expiresAt, refuse) =>
      placing.immediate(petId, createdAt, expiresAt, refuse),
    /**
     * completeOrder's transaction (src/orders/orders.service.ts complete): an open order past its
     * deadline at `now` is expired first; `refuse` gets the order's row, or undefined, and
     * returns a refusal or undefined. Without one the order is completed and its pet sold, with
     * order.completed and pet.updated: [id, the Order's JSON] comes back, else the refusal.
     */
    completeOrder: (id, now, refuse) => completing.immediate(id, now, refuse),
    ping: () => ping.get(),
    close: () => db.close(),

    /** The scopes of `key` when it is a known, unrevoked key, else false (ApiKeyVerifier.verify). */
    authenticate: keys.authenticate,
    isUnavailable,
  };
}

/** SQLite errors that mean "cannot serve now" rather than a bug (database-errors.ts). */
function isUnavailable(error) {
  return error?.code === 'SQLITE_BUSY' || error?.code === 'SQLITE_LOCKED';
}
