import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ApiError, INVALID_API_KEY_MESSAGE, unauthorized } from '../common/api-error.js';
import { API_KEY_STRATEGY } from './bearer.strategy.js';
import { inSpan } from '../telemetry/tracing.js';
import { isPublicRoute } from './public.decorator.js';

/** Default-deny: every route needs a valid API key unless it is marked `@Public()`. */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    if (isPublicRoute(this.reflector, context)) return true;
    return inSpan('ApiKeyGuard', {}, () => super.canActivate(context) as Promise<boolean>);
  }

  override handleRequest<T>(
    error: Error | null,
    principal: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (error) throw error;
    if (!principal) throw missingOrInvalidKey(context.switchToHttp().getRequest<FastifyRequest>());
    return principal;
  }
}

function missingOrInvalidKey(request: FastifyRequest): ApiError {
  return request.headers.authorization === undefined
    ? unauthorized('Missing API key: send it as "Authorization: Bearer <API_KEY>"')
    : unauthorized(INVALID_API_KEY_MESSAGE);
}
