import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseEntityTags } from './entity-tags.js';
import type { HttpRouteConfig } from './route-config.js';

/**
 * Conditional GETs (docs/api-design.md, "Conditional requests"): a route marked `etag` answers
 * 200 with an ETag, its own (a pet's, set by the handler) or a weak one computed from what it
 * sends, and 304 Not Modified, without a body, to a request whose If-None-Match names it
 * (RFC 9110 §8.8.3, §13.1.2, §15.4.5).
 */

/**
 * Stored by private caches (a browser, a mobile HTTP stack) but revalidated on every use, so each
 * use still goes through the key check; never kept by shared caches.
 */
export const CACHEABLE_CACHE_CONTROL = 'private, no-cache';

/**
 * A pure function of the body and the Link header (a last page gains `rel="next"` with the same
 * body), so every instance gives the same content the same tag. Weak: same data, not same bytes.
 * SHA-1 as a fingerprint, not a security measure: the client may read the content anyway.
 */
export function entityTagOf(body: string, link: string | undefined): string {
  const fingerprint = hash('sha1', link === undefined ? body : `${link}\n${body}`, 'base64url');
  return `W/"${fingerprint}"`;
}

/**
 * Whether If-None-Match fails for a current representation with this ETag, i.e. the answer is a
 * 304: `*`, or a listed tag equal to it under weak comparison (opaque-tags equal, `W/` ignored,
 * §8.8.3.2). An absent or invalid field is no condition (answered as if not sent).
 */
export function ifNoneMatchMatches(value: string | undefined, etag: string): boolean {
  if (value === undefined) return false;
  const tags = parseEntityTags(value);
  if (tags === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return tags?.some((tag) => tag.opaque === opaque) ?? false;
}

/**
 * In `onSend`: gives a 200 of an `etag` route an ETag unless its handler set one, and makes it a
 * 304 when If-None-Match matches: the 200's headers but Content-Type, a null payload so no
 * Content-Length either. A HEAD keeps its payload for Fastify's HEAD handler, which sends the
 * 200's length (RFC 9110 §8.6).
 */
export function answerConditionally(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  route: HttpRouteConfig | undefined,
): unknown {
  if (reply.statusCode !== 200 || typeof payload !== 'string' || !route?.etag) return payload;
  const etag = String(reply.getHeader('etag') ?? entityTagOf(payload, linkOf(reply)));
  reply.header('etag', etag).header('cache-control', CACHEABLE_CACHE_CONTROL);
  if (!ifNoneMatchMatches(request.headers['if-none-match'], etag)) return payload;
  reply.code(304).removeHeader('content-type');
  return request.method === 'HEAD' ? payload : null;
}

function linkOf(reply: FastifyReply): string | undefined {
  const link = reply.getHeader('link');
  return link === undefined ? undefined : String(link);
}
