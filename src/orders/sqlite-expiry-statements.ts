import { LIMIT_PARAMETER, type SqlRunner } from '../database/sql-runner.js';
import { PET_JSON_BEFORE_ID } from '../events/event-json.js';

/**
 * The open orders by deadline on SQLite. Without statistics (no ANALYZE) SQLite otherwise picks
 * orders_status_id_idx and reads and sorts every open order, for each batch and each look.
 */
export const SQLITE_OPEN_BY_DEADLINE = 'orders INDEXED BY orders_open_expires_at_idx';

/** An open order whose deadline has passed: it can only expire. */
const LAPSED = "status = 'open' AND expires_at <= :now";

/** A stored time as `Date.toISOString` writes it. */
const iso = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column})`;

/** The expired order `o`'s JSON as `orderJson` writes it. */
const ORDER_JSON = `'{"id":' || o.id || ',"petId":' || o.pet_id || ',"status":"' || o.status ||
  '","createdAt":"' || ${iso('o.created_at')} || '","expiresAt":"' || ${iso('o.expires_at')} ||
  '","closedAt":"' || ${iso('o.closed_at')} || '"}'`;

/** The pet `p`'s JSON as `petJson` writes it: json_quote escapes a name as JSON.stringify does. */
const PET_JSON = `'${PET_JSON_BEFORE_ID}' || p.id || ',"name":' || json_quote(p.name) ||
  ',"categoryId":' || p.category_id || ',"status":' || json_quote(p.status) || '}'`;

/**
 * SQLite's sweep batch (OrdersRepository.expireLapsed) in three statements, the events built by
 * the database from the rows: JSON built in JavaScript and parsed back by json_each cost as much
 * as the three writes together.
 */
export function sqliteExpiryStatements(db: SqlRunner) {
  return {
    expire: db.statement<{ now: string; limit: number }>(
      `UPDATE orders SET status = 'expired', closed_at = expires_at, revision = revision + 1
      WHERE id IN (SELECT id FROM ${SQLITE_OPEN_BY_DEADLINE} WHERE ${LAPSED}
        ORDER BY expires_at, id ${LIMIT_PARAMETER}) AND ${LAPSED}
      RETURNING id, pet_id, expires_at`,
    ),
    releasePets: db.statement<{ petIds: string }>(
      `UPDATE pets SET status = 'available', revision = revision + 1
      WHERE id IN (SELECT value FROM json_each(:petIds))`,
    ),
    // Each order.expired, then its pet's pet.updated, oldest deadline first, as on PostgreSQL.
    insertEvents: db.statement<{ orderIds: string; occurredAt: string }>(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
      SELECT e.type, :occurredAt, p.id, CASE e.n WHEN 1 THEN ${ORDER_JSON} ELSE ${PET_JSON} END,
        e.previous, NULL
      FROM orders o JOIN pets p ON p.id = o.pet_id,
        (SELECT 1 AS n, 'order.expired' AS type, NULL AS previous
          UNION ALL SELECT 2, 'pet.updated', '{"status":"pending"}') e
      WHERE o.id IN (SELECT value FROM json_each(:orderIds))
      ORDER BY o.expires_at, o.id, e.n`,
    ),
  };
}
