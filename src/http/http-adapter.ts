import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiError } from '../common/api-error.js';
import type { AppConfig } from '../config/app-config.js';
import { RequestLogController } from '../logging/request-log-controller.js';
import { registerBodyParsers } from './request-body.js';
import { routeHeaders } from './route-headers.js';
import type { RouteTable } from './route-table.js';

/** Sent on every response (api-decisions §11), whatever produced it. */
const HYGIENE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/** An incoming X-Request-Id is echoed only when it is short and plain; otherwise one is made. */
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

export function createHttpAdapter(config: AppConfig, logger: Logger): FastifyAdapter {
  const requestLog = new RequestLogController();
  return new FastifyAdapter({
    loggerInstance: logger,
    logController: requestLog,
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    genReqId: requestId,
    // Longer than any valid id, so an over-long petId reaches validation and its 400 names petId.
    routerOptions: { maxParamLength: 256 },
    // While closing, requests on open connections are still served (then the connection is closed)
    // instead of Fastify's own 503 body, which is not our Error shape.
    return503OnClosing: false,
    // A URL Fastify cannot route (bad percent-encoding, a path segment over maxParamLength). This
    // runs before routing, where none of our hooks apply, so it adds the headers and log line itself.
    frameworkErrors: (_error: Error, request: FastifyRequest, reply: FastifyReply) => {
      reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
      const error = new ApiError('VALIDATION_FAILED', 'The request URL is malformed');
      void reply
        .status(400)
        .headers(responseHeaders(request))
        .type('application/json')
        .send(error.body);
    },
    clientErrorHandler: answerUnparsableRequest,
  });
}

/** Wires what every request goes through; must run before routes are registered. */
export function configureHttpServer(fastify: FastifyInstance, routes: RouteTable): void {
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  registerBodyParsers(fastify);

  // Responses finished during shutdown close their connection; otherwise a keep-alive client that
  // sent its request before SIGTERM would hold close() open until its idle timeout.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    reply.headers(responseHeaders(request));
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

/** Headers every response carries (api-decisions §11), plus those its route declares. */
function responseHeaders(request: FastifyRequest): Record<string, string> {
  return { ...HYGIENE_HEADERS, 'x-request-id': request.id, ...routeHeaders(request) };
}

function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Bytes Node's HTTP parser rejects (a malformed request line or header, headers over the size
 * limit) never become a request; they still get the Error body instead of Fastify's own shape.
 * A client that stopped sending is just disconnected.
 */
function answerUnparsableRequest(error: Error & { code?: string }, socket: Socket): void {
  if (
    error.code === 'ECONNRESET' ||
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ||
    !socket.writable
  ) {
    socket.destroy();
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large'
      : 'Malformed HTTP request';
  const body = JSON.stringify(new ApiError('VALIDATION_FAILED', message).body);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...HYGIENE_HEADERS,
    'x-request-id': randomUUID(),
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
}
