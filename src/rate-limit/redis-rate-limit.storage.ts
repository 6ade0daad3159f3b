import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { Logger, type OnModuleInit } from '@nestjs/common';
import { waitForFirstConnection } from '../database/redis-first-connection.js';

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
    if (!(await waitForFirstConnection(this.redis)))
      this.logger.warn('Redis not reachable at start; rate limits apply once it is');
  }
}
