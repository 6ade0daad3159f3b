import fc from 'fast-check';
import { expect } from 'vitest';
import type { Engine } from './test-database.js';

/**
 * How the hostile-input suites (test/e2e/hostile-input/) run their fast-check properties, and
 * count the requests they send.
 *
 * FC_SEED=<n> replays a run (each file prints its seed at the start); FC_RUNS=<factor> scales every
 * property's run count (1 by default: over 10,000 requests across the files; 0.1 for a quick look,
 * 10 for a soak).
 */
export const SEED = process.env.FC_SEED
  ? Number(process.env.FC_SEED)
  : Math.floor(Math.random() * 2 ** 31);
export const SCALE = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 1;
if (!(SCALE > 0)) throw new Error(`FC_RUNS must be a positive number, got ${process.env.FC_RUNS}`);
console.log(
  `hostile-input: fast-check seed ${SEED}, run scale ${SCALE}; replay with FC_SEED=${SEED} FC_RUNS=${SCALE}`,
);

/** The bulk runs on SQLite; PostgreSQL gets a share, enough to catch engine differences. */
const ENGINE_SHARE: Record<Engine, number> = { sqlite: 1, postgres: 0.15 };

/**
 * The environment every hostile app runs with: no rate limits, or the runs would hit them (the
 * runs send thousands of refused keys from one address).
 */
/** Limits off; webhook targets unchecked, whose refusals test/unit/webhooks and e2e/webhooks prove. */
export const HOSTILE_ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

let requestsSent = 0;
const requestsByProperty = new Map<string, number>();

/** Counts one request sent to the service, for the floor each file checks at its end. */
export function countRequest(): void {
  requestsSent++;
}

/**
 * Runs a property `baseRuns` times (scaled by FC_RUNS and the engine's share) with the run's seed,
 * and records how many requests it sent.
 */
export function assertProperty<T>(
  name: string,
  engine: Engine,
  baseRuns: number,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  const before = requestsSent;
  const numRuns = Math.max(1, Math.round(baseRuns * SCALE * ENGINE_SHARE[engine]));
  return fc
    .assert(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns })
    .finally(() => requestsByProperty.set(`${name} [${engine}]`, requestsSent - before));
}

/** The least number of requests a file must have sent: its SQLite base runs, scaled by FC_RUNS. */
export function requestFloor(baseRuns: number): number {
  return Math.round(baseRuns * SCALE);
}

/**
 * Prints what each property sent and fails unless the file sent at least `floor` requests: a
 * property whose generator filtered everything away, or whose runs were cut, would pass silently.
 */
export function expectRequestsSent(floor: number): void {
  console.log(
    `hostile-input: ${requestsSent} requests (seed ${SEED})\n` +
      [...requestsByProperty].map(([name, count]) => `  ${name}: ${count}`).join('\n'),
  );
  expect(requestsSent).toBeGreaterThanOrEqual(floor);
}
