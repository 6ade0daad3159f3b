import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { RequestLogController } from '../logging/request-log-controller.js';
import { requestIdOf } from './request-id.js';
import { routeOf } from './route-config.js';
import { answerUnparsableRequest } from './socket-answers.js';
import { answerUnroutableUrl } from './unroutable-url.js';

/**
 * How long a client has to send a whole request, headers and body. A client that stalls is
 * disconnected, so slow clients cannot hold connections open (Fastify's default is no limit).
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often Node looks for requests past that time, so one is cut within a second of it. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Longer than any valid id, so an over-long petId reaches validation and its 400 names petId. */
const MAX_PARAM_LENGTH = 256;

/** The Fastify server Nest runs on, with the options every request depends on. */
export function createHttpAdapter(config: AppConfig, logger: Logger): FastifyAdapter {
  const requestLog = new RequestLogController((request) => routeOf(request).url);
  return new FastifyAdapter({
    loggerInstance: logger,
    // Fastify's own factory hands pino an options object, which takes pino's slower way to a
    // child; no route sets a log level or serializers of its own, so the bindings alone suffice.
    childLoggerFactory: (parent: FastifyBaseLogger, bindings: Bindings) => parent.child(bindings),
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
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // While closing, requests on open connections are still served (then the connection is closed)
    // instead of Fastify's own 503 body, which is not our Error shape.
    return503OnClosing: false,
    frameworkErrors: answerUnroutableUrl(requestLog),
    clientErrorHandler: answerUnparsableRequest,
  });
}
