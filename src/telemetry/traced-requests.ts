import { trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

/**
 * Names each request's span by its route (`GET /v1/pets/:petId`, never the raw URL), puts the trace
 * id in every log line of the request, 5xx entries included, and sends the W3C `traceparent` of
 * the server span back, so a client can quote it (docs/observability.md, "Traces").
 */
export function traceRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const span = trace.getActiveSpan();
    if (span) {
      const route = request.routeOptions.url;
      if (route !== undefined && !request.is404) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const { traceId, spanId, traceFlags } = span.spanContext();
      request.log = request.log.child({ traceId });
      reply.header('traceparent', `00-${traceId}-${spanId}-0${traceFlags.toString(16)}`);
    }
    done();
  });
}
