/** Where an event stands in the one order of events: its transaction, then its row. */
export interface EventPosition {
  tx: bigint;
  seq: bigint;
}

/** Before every event. */
export const START: EventPosition = { tx: 0n, seq: 0n };

/** Both parts are bigint columns: at most 19 decimal digits, no sign, no leading zero. */
const EVENT_ID = /^(0|[1-9]\d{0,18})-([1-9]\d{0,18})$/;
const MAX_BIGINT = 2n ** 63n - 1n;

export function isBefore(a: EventPosition, b: EventPosition): boolean {
  return a.tx < b.tx || (a.tx === b.tx && a.seq < b.seq);
}

/** The event's id, opaque to clients: also its feed cursor and its stream `id:` line. */
export function eventIdOf({ tx, seq }: EventPosition): string {
  return `${tx}-${seq}`;
}

/** The position an id names; undefined for anything eventIdOf cannot have made. */
export function positionOf(id: string): EventPosition | undefined {
  const match = EVENT_ID.exec(id);
  if (!match) return undefined;
  const [tx, seq] = [BigInt(match[1]), BigInt(match[2])];
  return tx <= MAX_BIGINT && seq <= MAX_BIGINT ? { tx, seq } : undefined;
}
