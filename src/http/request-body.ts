import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { ApiError, unsupportedMediaType } from '../errors/api-error.js';
import { httpRouteConfig } from './route-config.js';

/** Bodies are flat objects; deeper nesting is refused before anything recurses into it. */
export const MAX_JSON_DEPTH = 32;

/**
 * A body the parser refused. Fastify parses before Nest's guard runs, so the error is carried to
 * the validation pipe rather than thrown: without a valid key a bad body still gets the 401
 * (docs/api-design.md, "API keys").
 */
export class RejectedBody {
  constructor(readonly error: ApiError) {}
}

const JSON_TYPE = 'application/json';

/** What a route takes unless it says otherwise (route-config.ts, `bodyTypes`); every route takes JSON. */
const JSON_BODY_TYPES = [JSON_TYPE];

/** JSON Merge Patch (RFC 7396): a JSON object whose members say what to change. */
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';

/**
 * Parses the JSON media types (with parameters such as charset) that the route takes; any other
 * body is a 415 naming those the route takes, with `Accept-Patch` on a PATCH (RFC 5789 §2.2).
 */
export function registerBodyParsers(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    [JSON_TYPE, MERGE_PATCH_TYPE],
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: Buffer, done: ParserDone) => {
      const type = request.mediaType!;
      if (type !== JSON_TYPE && !bodyTypesOf(request).includes(type))
        return done(null, refused(request));
      parseJsonBody(request, body, done);
    },
  );
  fastify.addContentTypeParser('*', (request, _payload, done) => done(null, refused(request)));
}

type ParserDone = (error: Error | null, value?: unknown) => void;

function bodyTypesOf(request: FastifyRequest): readonly string[] {
  return httpRouteConfig(request)?.bodyTypes ?? JSON_BODY_TYPES;
}

function refused(request: FastifyRequest): RejectedBody {
  const types = bodyTypesOf(request);
  const headers: Record<string, string> =
    request.method === 'PATCH' ? { 'Accept-Patch': types.join(', ') } : {};
  return new RejectedBody(unsupportedMediaType(types, headers));
}

/**
 * Plain JSON.parse: an own `__proto__` stays a data property, which the pipe refuses by name. An
 * empty body is undefined ("required"); non-UTF-8 (RFC 8259 §8.1) and compressed bodies
 * (RFC 9110 §15.5.16) are refused rather than misread.
 */
function parseJsonBody(request: FastifyRequest, body: Buffer, done: ParserDone): void {
  if (body.length === 0) return done(null, undefined);
  const coding = request.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    const error = new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Content-Encoding is not supported: send the body uncompressed',
      { 'Accept-Encoding': 'identity' },
    );
    return done(null, new RejectedBody(error));
  }
  if (!isUtf8(body)) {
    return done(
      null,
      new RejectedBody(new ApiError('MALFORMED_JSON', 'Request body is not valid UTF-8')),
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return done(
      null,
      new RejectedBody(new ApiError('MALFORMED_JSON', 'Request body is not valid JSON')),
    );
  }
  if (nestingDepth(value) > MAX_JSON_DEPTH) {
    const error = new ApiError(
      'VALIDATION_FAILED',
      `request body must not nest more than ${MAX_JSON_DEPTH} levels deep`,
    );
    return done(null, new RejectedBody(error));
  }
  done(null, value);
}

/** Depth of arrays and objects, walked without recursion so no input can exhaust the stack. */
function nestingDepth(root: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[root, 0]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_JSON_DEPTH) break;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return deepest;
}
