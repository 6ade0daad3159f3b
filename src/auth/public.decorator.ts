import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { routeMetadata } from '../http/route-metadata.js';

const IS_PUBLIC_KEY = 'isPublic';
const publicMark = routeMetadata<boolean>(IS_PUBLIC_KEY);

/** Opts a route out of the global guards (API key, rate limit). Only health checks use it. */
export const Public = () => SetMetadata(IS_PUBLIC_KEY, true);

/** Whether the handler or its controller is marked `@Public()`. */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return publicMark(reflector, context) ?? false;
}
