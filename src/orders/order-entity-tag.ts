/**
 * An order's strong ETag: its id and revision, which closing it increments, so the tag an open
 * order was read with never matches it once completed, cancelled or expired.
 */
export function orderEntityTag(id: number, revision: number): string {
  return `"${id}-${revision}"`;
}

/** The revision of every open order: closing or expiring it is the only change an order has. */
export const OPEN_REVISION = 1;
