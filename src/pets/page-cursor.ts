/**
 * Keyset cursor: the id of the last pet on the previous page, wrapped so clients treat it as opaque.
 * Only the exact encoding this module produces is accepted.
 */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) return undefined;
  const match = /^after:([1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const lastId = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(lastId) && encodeCursor(lastId) === cursor ? lastId : undefined;
}
