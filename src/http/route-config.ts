import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest, RouteOptions } from 'fastify';

/**
 * What the HTTP layer does for a route beyond Nest's routing, read by the `onSend` hook
 * (http-server.ts) on every response of the route, including errors from the guards and pipes,
 * which an interceptor would not see.
 */
export interface HttpRouteConfig {
  /** Headers sent on every response of the route (response-headers.ts). */
  responseHeaders?: Record<string, string>;
  /**
   * Its 200 answers carry an ETag and honour If-None-Match with a 304 (conditional-get.ts;
   * docs/api-design.md, "Conditional requests").
   */
  etag?: boolean;
  /** The media types of request bodies it takes, in order of preference (default: JSON only). */
  bodyTypes?: readonly string[];
}

/** One per route: Fastify keeps a single config object per route. */
export const HttpRoute = (config: HttpRouteConfig) => RouteConfig(config);

export function httpRouteConfig(request: FastifyRequest): HttpRouteConfig | undefined {
  return request.routeOptions.config as HttpRouteConfig | undefined;
}

/** The same config, read from a route as it is registered (metrics: each route's Sunset header). */
export function registeredHttpRouteConfig(route: RouteOptions): HttpRouteConfig | undefined {
  return route.config;
}
