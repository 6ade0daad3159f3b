/** Largest integer a JSON client can carry exactly: the upper bound of every int64 id. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** Decimal digits with no sign, fraction, exponent or leading zero, no more than MAX_ID has. */
const CANONICAL_DECIMAL = /^[1-9]\d{0,15}$/;

/**
 * A positive integer as written in a URL or on a command line (an id, a page size, the id in a
 * cursor): the number a canonical decimal from 1 to MAX_ID stands for; undefined for any other
 * text, so one spelling names one number and every number is exact.
 */
export function parseCanonicalDecimal(text: string): number | undefined {
  if (!CANONICAL_DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return value <= MAX_ID ? value : undefined;
}
