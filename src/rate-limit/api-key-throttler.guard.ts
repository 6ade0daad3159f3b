import { ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
  type ThrottlerLimitDetail,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../auth/principal.js';
import { isPublicRoute } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { Metrics } from '../metrics/metrics.js';

/**
 * One budget per API key across all operations (docs/api-design.md, "Rate limits"). Runs after
 * the API-key guard, so every request it counts is authenticated; public routes (docs, health) are
 * not limited.
 */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  // IETF RateLimit header fields draft: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset.
  protected override headerPrefix = 'RateLimit';

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    @Optional() private readonly metrics?: Metrics,
  ) {
    super(options, storage, reflector);
  }

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(isPublicRoute(this.reflector, context));
  }

  protected override getTracker(request: FastifyRequest): Promise<string> {
    return Promise.resolve(principalOf(request).prefix);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, name: string) {
    return `animal-store:rate-limit:${name}:${tracker}`;
  }

  /** A counter store that cannot answer (Redis down) must not take the API down with it. */
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    try {
      return await super.handleRequest(request);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.logger.warn(`rate limit not enforced: ${(error as Error).message}`);
      return true;
    }
  }

  protected override throwThrottlingException(
    _context: ExecutionContext,
    { limit, timeToBlockExpire }: ThrottlerLimitDetail,
  ): Promise<void> {
    const seconds = String(Math.max(1, timeToBlockExpire));
    this.metrics?.rateLimited.inc({ limit: 'api_key' });
    throw new ApiError(
      'RATE_LIMITED',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${seconds} s`,
      {
        'Retry-After': seconds,
        'RateLimit-Limit': String(limit),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': seconds,
      },
    );
  }
}
