import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** An incoming X-Request-Id is echoed only when it is short and plain; otherwise one is made. */
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The id a request is logged and answered under (Fastify's `genReqId`). */
export function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
