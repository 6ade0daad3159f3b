import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { RequestLogController } from '../logging/request-log-controller.js';
import { setResponseHeaders } from './response-headers.js';

/**
 * Fastify's `frameworkErrors` handler: a URL it cannot route (bad percent-encoding, a path segment
 * over maxParamLength). This runs before routing, where none of our hooks apply, so it adds the
 * headers and the log line itself.
 */
export function answerUnroutableUrl(requestLog: RequestLogController) {
  return (_error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
    const error = new ApiError('VALIDATION_FAILED', 'The request URL is malformed');
    setResponseHeaders(request, reply, undefined);
    void reply.status(400).type('application/json').send(error.body);
  };
}
