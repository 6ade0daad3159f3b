import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest, RouteOptions } from 'fastify';

/**
 * Headers a route sends on every response, errors from the guard and pipes included, which an
 * interceptor could not do. Applied by `setResponseHeaders` (response-headers.ts).
 */
export const RouteHeaders = (headers: Record<string, string>) =>
  RouteConfig({ responseHeaders: headers });

export function routeHeaders(request: FastifyRequest): Record<string, string> | undefined {
  return headersIn(request.routeOptions.config);
}

/** The same headers, read from a route as it is registered. */
export function registeredRouteHeaders(route: RouteOptions): Record<string, string> | undefined {
  return headersIn(route.config);
}

function headersIn(config: unknown): Record<string, string> | undefined {
  return (config as { responseHeaders?: Record<string, string> } | undefined)?.responseHeaders;
}

export interface Deprecation {
  /** When the operation was deprecated (RFC 9745 `Deprecation`). */
  since: Date;
  /** When it stops working (RFC 8594 `Sunset`). */
  sunset: Date;
  /** What replaces it (`Link rel="successor-version"`). */
  successor: string;
}

export function deprecationHeaders({
  since,
  sunset,
  successor,
}: Deprecation): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(since.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: `<${successor}>; rel="successor-version"`,
  };
}
