import { ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ApiError, INVALID_API_KEY_MESSAGE, unauthorized } from '../errors/api-error.js';
import { Metrics } from '../metrics/metrics.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { API_KEY_STRATEGY } from './bearer.strategy.js';
import { inSpan } from '../telemetry/tracing.js';
import { principalOf } from './principal.js';
import { isPublicRoute } from './public.decorator.js';
import { RecentlyVerifiedKeys } from './recently-verified-keys.js';
import { requiredScope } from './require-scope.decorator.js';

const BEARER = /^Bearer (\S+)$/i;

/**
 * Default-deny: every route needs a valid API key unless it is marked `@Public()`, and the scope
 * its handler declares with `@RequireScope()` (docs/api-design.md, "API keys"). An address with
 * too many failed authentications is refused before its key is looked up ("Rate limits").
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly recentKeys: RecentlyVerifiedKeys,
    private readonly failures: AuthFailureLimiter,
    @Optional() private readonly metrics?: Metrics,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isPublicRoute(this.reflector, context)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    await inSpan('ApiKeyGuard', {}, () => this.authenticate(request, context));
    const scope = requiredScope(this.reflector, context);
    if (scope !== undefined && !principalOf(request).scopes.includes(scope)) {
      throw new ApiError('FORBIDDEN', `This API key lacks the scope ${scope}`);
    }
    return true;
  }

  override handleRequest<T>(
    error: Error | null,
    principal: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (error) throw error;
    if (!principal) {
      const request = context.switchToHttp().getRequest<FastifyRequest>();
      this.countUncheckedRefusal(request);
      throw missingOrInvalidKey(request);
    }
    return principal;
  }

  /** Passport's check, behind the failed-authentication limit of the client's address. */
  private async authenticate(request: FastifyRequest, context: ExecutionContext): Promise<void> {
    if (!this.failures.enabled || this.carriesRecentlyVerifiedKey(request)) {
      await super.canActivate(context);
      return;
    }
    const address = this.failures.clientAddress(request);
    await this.failures.refuseIfOverLimit(address);
    try {
      await super.canActivate(context);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UNAUTHORIZED') {
        await this.failures.recordFailure(address);
      }
      throw error;
    }
  }

  /**
   * A header without a Bearer token never reaches the key check, which counts its own refusals
   * (ApiKeyVerifier), so these two reasons are counted here.
   */
  private countUncheckedRefusal(request: FastifyRequest): void {
    const header = request.headers.authorization;
    if (header === undefined) this.metrics?.authFailures.inc({ reason: 'missing' });
    else if (!BEARER.test(header)) this.metrics?.authFailures.inc({ reason: 'malformed' });
  }

  /** A key this instance accepted lately skips the address limit, not the key check. */
  private carriesRecentlyVerifiedKey(request: FastifyRequest): boolean {
    const key = BEARER.exec(request.headers.authorization ?? '')?.[1];
    return key !== undefined && this.recentKeys.includes(key);
  }
}

function missingOrInvalidKey(request: FastifyRequest): ApiError {
  return request.headers.authorization === undefined
    ? unauthorized('Missing API key: send it as "Authorization: Bearer <API_KEY>"')
    : unauthorized(INVALID_API_KEY_MESSAGE);
}
