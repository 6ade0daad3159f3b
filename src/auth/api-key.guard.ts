import { ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, INVALID_API_KEY_MESSAGE, unauthorized } from '../errors/api-error.js';
import { replyOf, requestOf } from '../http/http-context.js';
import { Metrics } from '../metrics/metrics.js';
import { inSpan } from '../telemetry/tracing.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { bearerTokenOf, type BearerToken } from './bearer-token.js';
import { API_KEY_STRATEGY, type PassportView } from './bearer.strategy.js';
import { attachPrincipal, principalOf, type ApiKeyPrincipal } from './principal.js';
import { isPublicRoute } from './public.decorator.js';
import { RecentlyVerifiedKeys } from './recently-verified-keys.js';
import { lacksScope, requiredScope } from './require-scope.decorator.js';

const MISSING_API_KEY_MESSAGE = 'Missing API key: send it as "Authorization: Bearer <API_KEY>"';

/**
 * Default-deny: every route needs a valid API key unless it is marked `@Public()`, and the scope
 * its handler declares with `@RequireScope()` (docs/api-design.md, "API keys"). An address with
 * too many failed authentications is refused before its key is looked up ("Rate limits").
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  /** Each request's key hash while Passport checks its token, so that it is computed once. */
  private readonly keyHashes = new WeakMap<FastifyRequest, string>();

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
    const request = requestOf(context);
    await inSpan('ApiKeyGuard', {}, () => this.authenticate(request, context));
    const scope = requiredScope(this.reflector, context);
    if (scope !== undefined && !principalOf(request).scopes.includes(scope)) {
      throw lacksScope(scope);
    }
    return true;
  }

  /**
   * What Passport is shown of the request: the Authorization header alone, so that
   * passport-http-bearer never takes a key from the query string or the body (docs/api-design.md,
   * "API keys"), and the hash of its token.
   */
  override getRequest(context: ExecutionContext): PassportView {
    const request = requestOf(context);
    return {
      headers: { authorization: request.headers.authorization },
      apiKeyHash: this.keyHashes.get(request),
    };
  }

  /** The reply, which Passport is handed beside the view; AuthGuard's own goes through `switchToHttp()`. */
  getResponse(context: ExecutionContext): FastifyReply {
    return replyOf(context);
  }

  /** Passport's verdict on a token; the owner goes on the request, not on the view Passport saw. */
  override handleRequest<T extends ApiKeyPrincipal>(
    error: Error | null,
    principal: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (error) throw error;
    if (!principal) throw unauthorized(INVALID_API_KEY_MESSAGE);
    attachPrincipal(requestOf(context), principal);
    return principal;
  }

  /** The key check, behind the failed-authentication limit of the client's address. */
  private async authenticate(request: FastifyRequest, context: ExecutionContext): Promise<void> {
    const bearer = bearerTokenOf(request.headers.authorization);
    // A key this instance accepted lately skips the address limit, not the key check.
    if (!this.failures.enabled || ('hash' in bearer && this.recentKeys.includes(bearer.hash))) {
      return this.checkKey(bearer, context);
    }
    const address = this.failures.clientAddress(request);
    await this.failures.refuseIfOverLimit(address);
    try {
      await this.checkKey(bearer, context);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UNAUTHORIZED') {
        await this.failures.recordFailure(address);
      }
      throw error;
    }
  }

  /**
   * A token goes to Passport, whose verifier counts its own refusals; a request without one is
   * refused here and counted by its reason.
   */
  private async checkKey(bearer: BearerToken, context: ExecutionContext): Promise<void> {
    if ('token' in bearer) {
      const request = requestOf(context);
      this.keyHashes.set(request, bearer.hash);
      try {
        await super.canActivate(context);
      } finally {
        this.keyHashes.delete(request);
      }
      return;
    }
    this.metrics?.authFailures.inc({ reason: bearer.refusal });
    throw unauthorized(
      bearer.refusal === 'missing' ? MISSING_API_KEY_MESSAGE : INVALID_API_KEY_MESSAGE,
    );
  }
}
