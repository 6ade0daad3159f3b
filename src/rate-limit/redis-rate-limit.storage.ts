import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { Logger, type OnModuleInit } from '@nestjs/common';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_CONNECTION_WAIT_MS = 2_000;

/**
 * The maintained Redis counter store, set to fail fast: while Redis is away a command errors at
 * once instead of queueing, and the guard lets the request through uncounted.
 */
export class RedisRateLimitStorage extends ThrottlerStorageRedisService implements OnModuleInit {
  private readonly logger = new Logger('RateLimit');

  constructor(url: string) {
    super(url, { enableOfflineQueue: false, commandTimeout: 500 });
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  /** Gives the first connection a moment, so requests right after start are counted too. */
  async onModuleInit(): Promise<void> {
    if (this.redis.status === 'ready') return;
    const ready = once(this.redis, 'ready').then(
      () => true,
      () => false,
    );
    if (!(await Promise.race([ready, sleep(FIRST_CONNECTION_WAIT_MS).then(() => false)]))) {
      this.logger.warn('Redis not reachable at start; rate limits apply once it is');
    }
  }
}
