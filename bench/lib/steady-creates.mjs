// Pets created at a steady rate, for the workers that time how soon a change reaches a client
// (stream-latency-worker.mjs, webhook-latency-worker.mjs).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sends `createsPerSecond * seconds` creates to `origin`, each at its time on the schedule whether
 * or not the ones before it were answered, and resolves to them all once all are answered:
 * `{sentAt, answeredAt?, failure?, id?}`. `onAnswer` is called with each as it is answered.
 */
export async function createSteadily({ origin, key, createsPerSecond, seconds, name, onAnswer }) {
  const count = createsPerSecond * seconds;
  const startedAt = performance.now();
  const creates = [];
  for (let k = 0; k < count; k++) {
    const wait = startedAt + (k * 1000) / createsPerSecond - performance.now();
    if (wait > 0) await sleep(wait);
    creates.push(create(origin, key, `${name} ${k}`).then((c) => (onAnswer?.(c), c)));
  }
  return Promise.all(creates);
}

/** One createPet; `failure` says why it did not answer 201 (its status, or the client's error). */
async function create(origin, key, name) {
  const sentAt = performance.now();
  try {
    const response = await fetch(`${origin}/v1/pets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 7, status: 'available' }),
    });
    const pet = await response.json();
    const failure = response.status === 201 ? undefined : String(response.status);
    return { sentAt, answeredAt: performance.now(), failure, id: pet.id };
  } catch (error) {
    // A server too busy to take the connection in time: the run reports it instead of ending.
    return { sentAt, failure: error.cause?.code ?? error.message };
  }
}

/** How many times each value occurs. */
export function countOf(values) {
  const counts = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

export function round(ms) {
  return Math.round(ms * 100) / 100;
}
