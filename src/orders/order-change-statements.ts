import type { SqlRunner } from '../database/sql-runner.js';
import { PET_JSON_BEFORE_ID } from '../events/event-json.js';
import type { OrderOutcome } from './order-status.js';

/** An open order whose deadline has passed at the change's time: it can only expire. */
const LAPSED = "status = 'open' AND expires_at <= :occurredAt::timestamptz";

/** What an event of a change made in one statement carries besides what the database gives. */
interface EventParameters {
  traceContext: string | null;
}

/**
 * A timestamptz as `Date.toISOString` writes it: UTC, milliseconds, `Z`. The colons are quoted
 * text of the format, so none of them reads as a `:name` parameter.
 */
const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"')`;

/**
 * The pet's JSON as `petJson` writes it, from the row its UPDATE returns: an order's change always
 * leaves a status, and `to_json` escapes a name as JSON.stringify does.
 */
const PET_JSON = `'${PET_JSON_BEFORE_ID}' || pet.id || ',"name":' || to_json(pet.name)::text ||
  ',"categoryId":' || pet.category_id || ',"status":' || to_json(pet.status)::text || '}'`;

/** The JSON of a closed order, as `orderJson` writes it, from the row its UPDATE returns. */
const CLOSED_ORDER_JSON = `'{"id":' || closed.id || ',"petId":' || closed.pet_id ||
  ',"status":"' || closed.status || '","createdAt":"' || ${iso('closed.created_at')} ||
  '","expiresAt":"' || ${iso('closed.expires_at')} || '","closedAt":"' ||
  ${iso('closed.closed_at')} || '"}'`;

/**
 * Each order's event, then its pet's pet.updated with the status the pet had before: numbered and
 * inserted in that order (after `orderBy`, for several orders), so the identity gives them
 * ascending ids (as insertEvents does). `changed` joins the changed orders to their `pet` rows.
 */
const orderEvents = (
  changed: string,
  type: string,
  orderJson: string,
  previousStatus: string,
  orderBy = '',
) =>
  `INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous, trace_context)
  SELECT e.type, :occurredAt::timestamptz, pet.id, e.subject, e.previous, :traceContext::text
  FROM ${changed}, LATERAL (VALUES (1, ${type}, ${orderJson}, NULL),
    (2, 'pet.updated', ${PET_JSON}, '{"status":"${previousStatus}"}'))
    AS e (n, type, subject, previous)
  ORDER BY ${orderBy}e.n`;

/** The sweep's expired orders with their pets, and the order of their events: as the batch's. */
const EXPIRED_WITH_PET = 'closed JOIN pet ON pet.id = closed.pet_id';
const OLDEST_FIRST = 'closed.expires_at, closed.id, ';

/**
 * PostgreSQL's order changes each as one statement: the order, its pet and both events, guarded by
 * the same conditions as the transactions' statements (orders.repository.ts), so a change that
 * finds its condition unmet writes nothing and returns no row. One round trip instead of five.
 */
export function oneStatementChanges(db: SqlRunner) {
  return {
    // Holds the pet if it is available as the row is written, and opens its order.
    placeWithEvents: db.statement<
      EventParameters & {
        petId: number;
        occurredAt: string;
        expiresAt: string;
        orderAfterId: string;
      }
    >(
      `WITH pet AS (
        UPDATE pets SET status = 'pending', revision = revision + 1
        WHERE id = :petId AND status = 'available' RETURNING id, name, category_id, status
      ), placed AS (
        INSERT INTO orders (pet_id, status, created_at, expires_at)
        SELECT id, 'open', :occurredAt::timestamptz, :expiresAt::timestamptz FROM pet RETURNING id
      ), event AS (
        ${orderEvents('placed, pet', "'order.created'", `'{"id":' || placed.id || :orderAfterId::text`, 'available')}
      )
      SELECT placed.id AS order_id, pet.id, pet.name, pet.category_id, pet.status FROM placed, pet`,
    ),
    // Completes or cancels the order only while it is open and its deadline is ahead.
    closeWithEvents: db.statement<
      EventParameters & { id: number; status: OrderOutcome; petStatus: string; occurredAt: string }
    >(
      `WITH closed AS (
        UPDATE orders SET status = :status, closed_at = :occurredAt::timestamptz,
        revision = revision + 1
        WHERE id = :id AND status = 'open' AND expires_at > :occurredAt::timestamptz
        RETURNING id, pet_id, status, created_at, expires_at, closed_at, revision
      ), pet AS (
        UPDATE pets SET status = :petStatus, revision = pets.revision + 1 FROM closed
        WHERE pets.id = closed.pet_id RETURNING pets.id, pets.name, pets.category_id, pets.status
      ), event AS (
        ${orderEvents('closed, pet', "'order.' || closed.status", CLOSED_ORDER_JSON, 'pending')}
      )
      SELECT closed.id, closed.pet_id, closed.status, closed.created_at, closed.expires_at,
        closed.closed_at, closed.revision, pet.name, pet.category_id, pet.status AS pet_status
      FROM closed, pet`,
    ),
    // The sweep's batch: up to :limit lapsed orders, oldest deadline first, passing over rows a
    // completion has locked (its own condition decides them), with their pets and events; their
    // deadlines. The ids as an ARRAY, so they are looked up by key: as `IN (SELECT …)` here the
    // planner hash-joined a scan of every order.
    expireLapsedWithEvents: db.statement<EventParameters & { limit: number; occurredAt: string }>(
      `WITH closed AS (
        UPDATE orders SET status = 'expired', closed_at = expires_at, revision = revision + 1
        WHERE id = ANY(ARRAY(SELECT id FROM orders WHERE ${LAPSED}
          ORDER BY expires_at, id LIMIT :limit + 0 FOR UPDATE SKIP LOCKED)) AND ${LAPSED}
        RETURNING id, pet_id, status, created_at, expires_at, closed_at
      ), pet AS (
        UPDATE pets SET status = 'available', revision = pets.revision + 1 FROM closed
        WHERE pets.id = closed.pet_id RETURNING pets.id, pets.name, pets.category_id, pets.status
      ), event AS (
        ${orderEvents(EXPIRED_WITH_PET, "'order.expired'", CLOSED_ORDER_JSON, 'pending', OLDEST_FIRST)}
      )
      SELECT expires_at FROM closed`,
    ),
  };
}
