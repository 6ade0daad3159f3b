import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../common/api-error.js';
import type { AppConfig } from '../config/app-config.js';
import { RequestLogController } from '../logging/request-log-controller.js';
import { registerBodyParsers } from './request-body.js';
import { routeHeaders } from './route-headers.js';
import type { RouteTable } from './route-table.js';

/** An incoming X-Request-Id is echoed only when it is short and plain; otherwise one is made. */
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

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

  registerBodyParsers(fastify);

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
