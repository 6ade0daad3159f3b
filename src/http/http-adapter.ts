import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
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

/**
 * How long a client has to send a whole request, headers and body. A client that stalls is
 * disconnected, so slow clients cannot hold connections open (Fastify's default is no limit).
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often Node looks for requests past that time, so one is cut within a second of it. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

export function createHttpAdapter(config: AppConfig, logger: Logger): FastifyAdapter {
  const requestLog = new RequestLogController();
  return new FastifyAdapter({
    loggerInstance: logger,
    logController: requestLog,
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      // Node's own check answers a bare 400 without our Error body; checkRequest does it instead.
      requireHostHeader: false,
    },
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
      setResponseHeaders(request, reply);
      void reply.status(400).type('application/json').send(error.body);
    },
    clientErrorHandler: answerUnparsableRequest,
  });
}

/** Wires what every request goes through; must run before routes are registered. */
export function configureHttpServer(fastify: FastifyInstance, routes: RouteTable): void {
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  registerBodyParsers(fastify);
  fastify.addHook('onRequest', checkRequest);
  // Without these listeners Node answers an unknown Expect with a bare 417 and drops a CONNECT
  // without a word. An expectation other than 100-continue is ignored (RFC 9110 §10.1.1 allows
  // it), and a CONNECT is refused: this is not a proxy.
  fastify.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    fastify.server.emit('request', request, response),
  );
  fastify.server.on('connect', (_request: IncomingMessage, socket: Socket) =>
    endWithError(socket, 'CONNECT is not supported: this server is not a proxy'),
  );

  // Responses finished during shutdown close their connection; otherwise a keep-alive client that
  // sent its request before SIGTERM would hold close() open until its idle timeout.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    setResponseHeaders(request, reply);
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * What the HTTP layer refuses or repairs before any route sees a request. HTTP/1.1 requires exactly
 * one Host header, and no request may carry two (RFC 9112 §3.2). A Content-Type that is not a media type at all counts as none,
 * so the request still meets the key check first, then our parsers (Fastify would refuse it with a
 * 415 before anything else, even on an unknown route).
 */
function checkRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const hosts = countHostHeaders(request.raw.rawHeaders);
  if (hosts > 1 || (hosts === 0 && request.raw.httpVersion === '1.1')) {
    const error = new ApiError('VALIDATION_FAILED', 'A request must have exactly one Host header');
    void reply.status(400).header('connection', 'close').type('application/json').send(error.body);
    return;
  }
  if (request.headers['content-type'] !== undefined && request.mediaType === undefined)
    delete request.headers['content-type'];
  done();
}

/**
 * Headers every response carries (api-decisions §11), plus those its route declares. Set one by one
 * from constant objects: this runs on every response.
 */
function setResponseHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(HYGIENE_HEADERS).header('x-request-id', request.id);
  const fromRoute = routeHeaders(request);
  if (fromRoute) reply.headers(fromRoute);
}

const HOST = /^host$/i;

/** Runs on every request: a case-insensitive test per header name, no lower-cased copies. */
function countHostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (HOST.test(rawHeaders[i])) count++;
  return count;
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
  endWithError(
    socket,
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large'
      : 'Malformed HTTP request',
  );
}

/** Writes a 400 with the Error body straight to the socket and closes it. */
function endWithError(socket: Socket, message: string): void {
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
