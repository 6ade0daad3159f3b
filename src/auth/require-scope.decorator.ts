import { applyDecorators, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import { ApiError } from '../errors/api-error.js';
import { ApiErrorResponses } from '../errors/api-error-responses.js';
import { routeMetadata } from '../http/route-metadata.js';
import type { Scope } from './scopes.js';

const REQUIRED_SCOPE_KEY = 'requiredScope';
const scopeMark = routeMetadata<Scope>(REQUIRED_SCOPE_KEY);

/** The security scheme every operation names (src/docs/openapi.ts). */
export const BEARER_SCHEME = 'bearerAuth';

/** The operation's field listing the scopes it needs (docs/api-design.md, "The OpenAPI document"). */
export const SCOPES_EXTENSION = 'x-required-scopes';

/**
 * Declares the scope an operation needs (docs/api-design.md, "API keys"); on a controller, the
 * scope each of its operations needs. The API-key guard enforces it; the OpenAPI document shows it
 * in the operation's `x-required-scopes`, and the 403 a key without it gets.
 */
export const RequireScope = (scope: Scope) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE_KEY, scope),
    // OpenAPI 3.0 keeps a security requirement's scope list for OAuth2 and OpenID Connect; for
    // an http bearer scheme it must be empty, so the scope goes in an extension instead.
    ApiSecurity(BEARER_SCHEME),
    ApiExtension(SCOPES_EXTENSION, [scope]),
    ApiErrorResponses(403),
  );

/** The scope the handler, or else its controller, was declared with; undefined when none was. */
export function requiredScope(reflector: Reflector, context: ExecutionContext): Scope | undefined {
  return scopeMark(reflector, context);
}

/** The 403 of a key without the scope an operation needs. */
export const lacksScope = (scope: Scope): ApiError =>
  new ApiError('FORBIDDEN', `This API key lacks the scope ${scope}`);
