import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

const IS_PUBLIC_KEY = 'isPublic';

/** Opts a route out of the global guards (API key, rate limit). Only health checks use it. */
export const Public = () => SetMetadata(IS_PUBLIC_KEY, true);

/** Whether the handler or its controller is marked `@Public()`. */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return (
    reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, [
      context.getHandler(),
      context.getClass(),
    ]) ?? false
  );
}
