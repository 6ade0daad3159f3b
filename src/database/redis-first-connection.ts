import type { Cluster, Redis } from 'ioredis';
import { once } from 'node:events';

const FIRST_CONNECTION_WAIT_MS = 2_000;

/**
 * Gives a fail-fast Redis client (no offline queue) a moment for its first connection, so the
 * counters it keeps count from an instance's first request, not after it. Answers false when
 * Redis refuses or does not answer in time: the caller runs on and counts once it connects.
 */
export async function waitForFirstConnection(redis: Redis | Cluster): Promise<boolean> {
  if (redis.status === 'ready') return true;
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(FIRST_CONNECTION_WAIT_MS) });
    return true;
  } catch {
    return false;
  }
}
