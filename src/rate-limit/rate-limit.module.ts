import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { LIMIT_WINDOW_MS, type AppConfig } from '../config/app-config.js';
import { ApiKeyThrottlerGuard } from './api-key-throttler.guard.js';
import { RedisRateLimitStorage } from './redis-rate-limit.storage.js';

/**
 * Per-key rate limits (docs/api-design.md, "Rate limits"). Counters live in Redis when REDIS_URL
 * is set, so every replica draws on one budget; otherwise in this process's memory.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.rateLimitPerMinute === 0) return { module: RateLimitModule };
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [{ ttl: LIMIT_WINDOW_MS, limit: config.rateLimitPerMinute }],
          storage: config.redisUrl ? new RedisRateLimitStorage(config.redisUrl) : undefined,
        }),
      ],
      providers: [{ provide: APP_GUARD, useClass: ApiKeyThrottlerGuard }],
    };
  }
}
