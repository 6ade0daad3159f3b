import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpRouteConfig } from './route-config.js';

/**
 * Conditional GETs (docs/api-design.md, "Conditional requests"): a route marked `etag` answers
 * 200 with a weak ETag computed from what it sends, and 304 Not Modified, without a body, to a
 * request whose If-None-Match names it (RFC 9110 §8.8.3, §13.1.2, §15.4.5).
 */

/**
 * Stored by private caches (a browser, a mobile HTTP stack) but revalidated on every use, so each
 * use still goes through the key check; never kept by shared caches.
 */
export const CACHEABLE_CACHE_CONTROL = 'private, no-cache';

/**
 * The ETag of an answer: a pure function of its body and its Link header, the two parts of it that
 * change with the data (a full last page gains a `rel="next"` link when a pet is added, with the
 * same body). So every instance, on either engine, gives the same content the same ETag. Weak,
 * because it promises the same data, not the same bytes in every encoding. SHA-1 is a fast
 * fingerprint here, not a security measure: the content is what the client may read anyway.
 */
export function entityTagOf(body: string, link: string | undefined): string {
  const fingerprint = hash('sha1', link === undefined ? body : `${link}\n${body}`, 'base64url');
  return `W/"${fingerprint}"`;
}

/** `W/"…"` or `"…"`: the opaque-tag is the quoted part, any of %x21 / %x23-7E / obs-text. */
const ENTITY_TAG = /(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")/y;

/**
 * The entity tags of an If-None-Match value as their quoted opaque-tags, `*` for "any", or
 * undefined when the value is not valid (RFC 9110 §13.1.2: `"*" / #entity-tag`). Lists follow
 * §5.6.1: elements separated by commas with optional whitespace, empty elements allowed. A comma
 * inside quotes belongs to the tag.
 */
export function parseIfNoneMatch(value: string): '*' | string[] | undefined {
  if (value.trim() === '*') return '*';
  const tags: string[] = [];
  let at = 0;
  while (at < value.length) {
    const char = value[at];
    if (char === ',' || char === ' ' || char === '\t') {
      at += 1;
      continue;
    }
    ENTITY_TAG.lastIndex = at;
    const tag = ENTITY_TAG.exec(value);
    if (tag === null) return undefined;
    tags.push(tag[1]);
    at = ENTITY_TAG.lastIndex;
    while (value[at] === ' ' || value[at] === '\t') at += 1;
    if (at < value.length && value[at] !== ',') return undefined;
  }
  return tags;
}

/**
 * Whether If-None-Match fails for a current representation with this ETag, i.e. the answer is a
 * 304: `*`, or a listed tag equal to it under weak comparison (opaque-tags equal, `W/` ignored,
 * §8.8.3.2). An absent or invalid field is no condition (answered as if not sent).
 */
export function ifNoneMatchMatches(value: string | undefined, etag: string): boolean {
  if (value === undefined) return false;
  const tags = parseIfNoneMatch(value);
  if (tags === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return tags?.includes(opaque) ?? false;
}

/**
 * Runs in `onSend`, after the other headers are set: gives a 200 of an `etag` route its ETag and
 * Cache-Control, and turns it into a 304 when If-None-Match matches. The 304 keeps every header of
 * the 200 except the representation's Content-Type, and has no body: the payload becomes null, so
 * Fastify sends no Content-Length either. A HEAD keeps its payload for Fastify's HEAD handler,
 * which sends none and sets Content-Length to the 200's, as RFC 9110 §8.6 allows.
 */
export function answerConditionally(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  route: HttpRouteConfig | undefined,
): unknown {
  if (reply.statusCode !== 200 || typeof payload !== 'string' || !route?.etag) return payload;
  const link = reply.getHeader('link');
  const etag = entityTagOf(payload, link === undefined ? undefined : String(link));
  reply.header('etag', etag).header('cache-control', CACHEABLE_CACHE_CONTROL);
  if (!ifNoneMatchMatches(request.headers['if-none-match'], etag)) return payload;
  reply.code(304).removeHeader('content-type');
  return request.method === 'HEAD' ? payload : null;
}
