import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';

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

/** The route a request matched, as the request log, the metrics and the `onSend` hook read it. */
export interface MatchedRoute {
  /** The route's pattern (`/v1/pets/:petId`); undefined for a request no route matched. */
  readonly url: string | undefined;
  readonly config: HttpRouteConfig | undefined;
  /** Its handler's metadata, as guards read it (route-metadata.ts); absent where none matched. */
  readonly metadata?: Map<string | symbol, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by its route's own `onRequest` hook (`markRequestsWithRoute`). */
    matchedRoute: MatchedRoute | null;
  }
}

/**
 * Gives the route a hook of its own that marks each of its requests with the route, found once
 * here: Fastify's `request.routeOptions` builds a new object of a dozen fields on every read.
 */
export function markRequestsWithRoute(route: RouteOptions): void {
  const matched: MatchedRoute = { url: route.url, config: route.config, metadata: new Map() };
  const mark: onRequestHookHandler = (request, _reply, done) => {
    request.matchedRoute = matched;
    done();
  };
  route.onRequest = [route.onRequest ?? []].flat().concat(mark);
}

/**
 * The request's route: its mark, or, for one that an earlier hook answered before the mark was
 * set, that no route matched, or that its route handed to the 404 handler (Nest does so for
 * `/v1/pets/`, an empty `:petId`), what Fastify says of it.
 */
export function routeOf(request: FastifyRequest): MatchedRoute {
  if (request.matchedRoute && !request.is404) return request.matchedRoute;
  const { url, config } = request.routeOptions;
  return { url, config: config as HttpRouteConfig | undefined };
}

export function httpRouteConfig(request: FastifyRequest): HttpRouteConfig | undefined {
  return routeOf(request).config;
}

/** The same config, read from a route as it is registered (metrics: each route's Sunset header). */
export function registeredHttpRouteConfig(route: RouteOptions): HttpRouteConfig | undefined {
  return route.config;
}
