import { Redis } from 'ioredis';
import { LIMIT_WINDOW_MS } from '../config/app-config.js';
import { waitForFirstConnection } from '../database/redis-first-connection.js';
import { addressCache } from './address-cache.js';

/** Failed authentications from one address in its current one-minute window. */
export interface FailureCount {
  failures: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  windowLeftMs: number;
}

/** Where failed authentications are counted: this process, or Redis shared by every instance. */
export interface AuthFailureCounters {
  /** Resolves once the store can count, or false when it cannot yet (Redis away at start). */
  ready(): Promise<boolean>;
  read(address: string): Promise<FailureCount>;
  /** Counts one more failure; the first one of a window starts it. */
  add(address: string): Promise<FailureCount>;
  close(): Promise<void>;
}

/** Bounds the memory an attacker cycling through addresses can make this process hold. */
const MAX_COUNTED_ADDRESSES = 100_000;

export class InProcessFailureCounters implements AuthFailureCounters {
  private readonly windows = addressCache<{ failures: number; endsAt: number }>(
    MAX_COUNTED_ADDRESSES,
  );

  ready(): Promise<boolean> {
    return Promise.resolve(true);
  }

  read(address: string): Promise<FailureCount> {
    return Promise.resolve(this.countOf(address, Date.now()));
  }

  add(address: string): Promise<FailureCount> {
    const now = Date.now();
    const { failures, windowLeftMs } = this.countOf(address, now);
    const window = { failures: failures + 1, endsAt: now + windowLeftMs };
    this.windows.set(address, window);
    return Promise.resolve({ failures: window.failures, windowLeftMs });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private countOf(address: string, now: number): FailureCount {
    const window = this.windows.get(address);
    if (!window || window.endsAt <= now) return { failures: 0, windowLeftMs: LIMIT_WINDOW_MS };
    return { failures: window.failures, windowLeftMs: window.endsAt - now };
  }
}

/** INCR, starting the window's expiry on its first failure; answers the count and time left. */
const ADD_SCRIPT = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {failures, redis.call('PTTL', KEYS[1])}`;

/**
 * Counters in Redis, so a flood spread over instances is counted once (like the per-key budget,
 * src/rate-limit/rate-limit.module.ts). Fails fast while Redis is away, as the per-key store does.
 */
export class RedisFailureCounters implements AuthFailureCounters {
  private readonly redis: Redis;

  constructor(url: string, onError: (error: Error) => void) {
    this.redis = new Redis(url, { enableOfflineQueue: false, commandTimeout: 500 });
    this.redis.on('error', onError);
  }

  ready(): Promise<boolean> {
    return waitForFirstConnection(this.redis);
  }

  async read(address: string): Promise<FailureCount> {
    const key = redisKey(address);
    const [[, failures], [, ttl]] = (await this.redis.multi().get(key).pttl(key).exec()) as [
      [null, string | null],
      [null, number],
    ];
    return toCount(Number(failures ?? 0), ttl);
  }

  async add(address: string): Promise<FailureCount> {
    const [failures, ttl] = (await this.redis.eval(
      ADD_SCRIPT,
      1,
      redisKey(address),
      LIMIT_WINDOW_MS,
    )) as [number, number];
    return toCount(failures, ttl);
  }

  close(): Promise<void> {
    this.redis.disconnect();
    return Promise.resolve();
  }
}

function redisKey(address: string): string {
  return `animal-store:auth-failures:${address}`;
}

/** PTTL is negative for a key without expiry or none at all: then no window is running. */
function toCount(failures: number, ttl: number): FailureCount {
  return ttl > 0 ? { failures, windowLeftMs: ttl } : { failures: 0, windowLeftMs: LIMIT_WINDOW_MS };
}
