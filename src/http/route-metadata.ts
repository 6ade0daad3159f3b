import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { requestOf } from './http-context.js';

/**
 * A reader of one metadata key of a request's route, the handler's value over its class's (as
 * `Reflector.getAllAndOverride`). Decorators are applied when the classes load, so the value is
 * read once per route and kept with the route the request is marked with (route-config.ts; a
 * route has one handler, its version being in its path): read on every request, it walks
 * reflect-metadata's maps.
 */
export function routeMetadata<T>(
  key: string | symbol,
): (reflector: Reflector, context: ExecutionContext) => T | undefined {
  return (reflector, context) => {
    const known = requestOf(context).matchedRoute?.metadata;
    if (known?.has(key)) return known.get(key) as T | undefined;
    const value = reflector.getAllAndOverride<T | undefined>(key, [
      context.getHandler(),
      context.getClass(),
    ]);
    known?.set(key, value);
    return value;
  };
}
