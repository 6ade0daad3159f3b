import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../common/api-error.js';
import type { AppConfig } from '../config/app-config.js';
import { RequestLogController } from '../logging/request-log-controller.js';
import { routeHeaders } from './route-headers.js';
import type { RouteTable } from './route-table.js';

/** An incoming X-Request-Id is echoed only when it is short and plain; otherwise one is made. */
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Bodies are flat objects; deeper nesting is refused before anything recurses into it. */
const MAX_JSON_DEPTH = 32;

export function createHttpAdapter(config: AppConfig, logger: Logger): FastifyAdapter {
  return new FastifyAdapter({
    loggerInstance: logger,
    logController: new RequestLogController(),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    genReqId: requestId,
    // While closing, requests on open connections are still served (then the connection is closed)
    // instead of Fastify's own 503 body, which is not our Error shape.
    return503OnClosing: false,
    frameworkErrors: (_error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const error = new ApiError('VALIDATION_FAILED', 'The request URL is malformed');
      void reply.status(400).type('application/json').send(error.body);
    },
  });
}

/** Wires what every request goes through; must run before routes are registered. */
export function configureHttpServer(fastify: FastifyInstance, routes: RouteTable): void {
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));

  // Only JSON bodies are accepted: anything else is a 415 from Fastify.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);

  fastify.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.headers({
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-request-id': request.id,
      ...routeHeaders(request),
    });
    return payload;
  });
}

function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Plain JSON.parse (an own `__proto__` key stays a harmless data property; the validation pipe
 * rejects it by name). An empty body parses to undefined, which validation reports as missing.
 */
function parseJsonBody(_request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void): void {
  if (body.length === 0) return done(null, undefined);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return done(new ApiError('MALFORMED_JSON', 'Request body is not valid JSON'));
  }
  if (nestingDepth(value) > MAX_JSON_DEPTH) {
    return done(new ApiError('VALIDATION_FAILED', `request body must not nest more than ${MAX_JSON_DEPTH} levels deep`));
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
