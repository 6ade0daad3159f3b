import type { FastifyReply, FastifyRequest } from 'fastify';
import { type HttpRouteConfig } from './route-config.js';

/**
 * Headers every response carries, whatever produced it (docs/api-design.md, "Response headers");
 * a 200 or 304 with an ETag replaces the Cache-Control (conditional-get.ts).
 */
const FIXED_HYGIENE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

const REQUEST_ID_HEADER = 'x-request-id';

/** The hygiene headers as an object, for an answer written straight to a socket. */
export function hygieneHeaders(requestId: string): Record<string, string> {
  return { ...FIXED_HYGIENE_HEADERS, [REQUEST_ID_HEADER]: requestId };
}

/** Sets the hygiene headers, then those the request's route declares, if it matched one. */
export function setResponseHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  route: HttpRouteConfig | undefined,
): void {
  reply.headers(FIXED_HYGIENE_HEADERS).header(REQUEST_ID_HEADER, request.id);
  if (route?.responseHeaders) reply.headers(route.responseHeaders);
}
