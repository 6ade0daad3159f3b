import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { requestOf } from '../http/http-context.js';
import type { Scope } from './scopes.js';

/** Who made a request: attached to the request by the guard. Never carries the key. */
export interface ApiKeyPrincipal {
  id: number;
  name: string;
  /** The key's public identifier: unique across databases, so safe as a shared counter name. */
  prefix: string;
  scopes: readonly Scope[];
  /** When the key stops working; null: never. A response that outlives its request ends then. */
  expiresAt: Date | null;
}

type WithPrincipal = FastifyRequest & { user?: ApiKeyPrincipal };

/** Puts the key owner the guard accepted on the request, for the handler and the guards after. */
export function attachPrincipal(request: FastifyRequest, principal: ApiKeyPrincipal): void {
  (request as WithPrincipal).user = principal;
}

/** The key owner the guard attached to the request, if it accepted a key for it. */
export function verifiedPrincipalOf(request: FastifyRequest): ApiKeyPrincipal | undefined {
  return (request as WithPrincipal).user;
}

/** The key owner of a request behind the guard; only a public route has none. */
export function principalOf(request: FastifyRequest): ApiKeyPrincipal {
  const principal = verifiedPrincipalOf(request);
  if (!principal) throw new Error('No API key principal on the request: is the route public?');
  return principal;
}

/** Injects the authenticated key's owner into a handler parameter. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiKeyPrincipal => principalOf(requestOf(context)),
);
