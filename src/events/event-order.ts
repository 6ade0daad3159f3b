import type { SqlRunner } from '../database/sql-runner.js';
import type { EventPosition } from './event-position.js';

/** A PostgreSQL transaction id's low 32 bits: 0, 1 and 2 are no transaction's, in any epoch. */
const XID_MASK = 0xffff_ffffn;
const FIRST_NORMAL_XID = 3n;

/**
 * The one order of events in each engine's SQL, over `pet_events e` (docs/events.md, "Order").
 * PostgreSQL orders by (tx, seq) and serves only rows of transactions that have all ended: none
 * can appear before them later. On SQLite one writer commits at a time, `tx` is always 0 and the
 * rowid `seq` is the order. `after` and `before` take the SQL of a position's two parts: named
 * parameters, or another table's columns. `issues` says whether the engine could have given an
 * event this position: the SQL and the positions compared in memory agree only on those.
 */
export function eventOrder(db: SqlRunner) {
  if (db.driver.options.type === 'postgres') {
    return {
      issues: ({ tx }: EventPosition) => (tx & XID_MASK) >= FIRST_NORMAL_XID,
      after: (tx: string, seq: string) => `(e.tx, e.seq) > (${tx}, ${seq})`,
      before: (tx: string, seq: string) => `(e.tx, e.seq) < (${tx}, ${seq})`,
      committed: 'e.tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint',
      ascending: 'e.tx, e.seq',
      descending: 'e.tx DESC, e.seq DESC',
    };
  }
  return {
    issues: ({ tx }: EventPosition) => tx === 0n,
    after: (_tx: string, seq: string) => `e.seq > ${seq}`,
    before: (_tx: string, seq: string) => `e.seq < ${seq}`,
    committed: 'true',
    ascending: 'e.seq',
    descending: 'e.seq DESC',
  };
}
