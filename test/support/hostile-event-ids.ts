import fc from 'fast-check';
import type { Engine } from './test-database.js';

/** The 400 for an event id in `field` (`after`, `Last-Event-ID`) that this feed never issued. */
export const refusedEventId = (field: string) => ({
  code: 'VALIDATION_FAILED',
  message: `${field} must be the id of an event from this feed`,
  status: 400,
});

/** The largest value of a bigint column: the largest part of an event id. */
export const MAX_BIGINT = 2n ** 63n - 1n;

/** Whether `engine` issues a transaction part `tx`: 0 on SQLite; a normal xid on PostgreSQL. */
export function issuesTx(engine: Engine, tx: bigint): boolean {
  return engine === 'sqlite' ? tx === 0n : (tx & 0xffff_ffffn) >= 3n;
}

/**
 * Ids of the feed's form or near it that this engine never issues: a forged transaction part
 * (any on SQLite, 0 to 2 in any epoch on PostgreSQL), and each part zero, negative, too big or
 * with leading zeros.
 */
export function forgedEventId(engine: Engine, ids: string[]): fc.Arbitrary<string> {
  const seq = fc.oneof(fc.constant(1n), fc.bigInt({ min: 1n, max: MAX_BIGINT }));
  const tx = engine === 'sqlite' ? fc.constant(0n) : fc.bigInt({ min: 3n, max: 2n ** 32n - 1n });
  const forgedTx =
    engine === 'sqlite'
      ? fc.bigInt({ min: 1n, max: MAX_BIGINT })
      : fc
          .tuple(fc.bigInt({ min: 0n, max: 2n ** 31n - 1n }), fc.bigInt({ min: 0n, max: 2n }))
          .map(([epoch, xid]) => (epoch << 32n) + xid);
  const real = fc.constantFrom(...ids).map((id) => id.split('-').map(BigInt) as [bigint, bigint]);
  const huge = fc.bigInt({ min: MAX_BIGINT + 1n, max: 10n ** 25n });
  return fc.oneof(
    fc.tuple(forgedTx, seq).map(([t, s]) => `${t}-${s}`),
    fc.tuple(forgedTx, real).map(([t, [, s]]) => `${t}-${s}`),
    tx.map((t) => `${t}-0`),
    fc
      .tuple(real, fc.integer({ min: 1, max: 3 }))
      .map(([[t, s], zeros]) => `${'0'.repeat(zeros)}${t}-${s}`),
    fc
      .tuple(real, fc.integer({ min: 1, max: 3 }))
      .map(([[t, s], zeros]) => `${t}-${'0'.repeat(zeros)}${s}`),
    real.map(([t, s]) => `-${t}-${s}`),
    real.map(([t, s]) => `${t}--${s}`),
    fc.tuple(huge, real).map(([t, [, s]]) => `${t}-${s}`),
    fc.tuple(real, huge).map(([[t], s]) => `${t}-${s}`),
  );
}
