import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';

/**
 * Refused or repaired before routing (`onRequest`): exactly one Host header (RFC 9112 §3.2); a
 * Content-Type that is no media type counts as none, so the key check still comes first (Fastify
 * would answer 415 before anything, even on an unknown route).
 */
export function checkRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!hasOneHostHeader(request)) {
    const error = new ApiError('VALIDATION_FAILED', 'A request must have exactly one Host header');
    void reply.status(400).header('connection', 'close').type('application/json').send(error.body);
    return;
  }
  if (request.headers['content-type'] !== undefined && request.mediaType === undefined)
    delete request.headers['content-type'];
  done();
}

/** HTTP/1.0 may omit Host; no version may repeat it. */
function hasOneHostHeader(request: FastifyRequest): boolean {
  const hosts = countHostHeaders(request.raw.rawHeaders);
  return hosts === 1 || (hosts === 0 && request.raw.httpVersion !== '1.1');
}

const HOST = /^host$/i;

/** Runs on every request: a case-insensitive test per header name, no lower-cased copies. */
function countHostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (HOST.test(rawHeaders[i])) count++;
  return count;
}
