import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ERROR_CODES } from '../errors/error-codes.js';
import { type MatchedRoute, registeredHttpRouteConfig, routeOf } from './route-config.js';
import type { HistogramSeries } from '../metrics/latency-histogram.js';
import type { Metrics } from '../metrics/metrics.js';

/** The `operation` label of a request no route matched. */
const UNMATCHED = 'unmatched';

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** Methods kept as label values; any other (a client may send WebDAV's, say) counts as `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Records every request the HTTP server answers. The `operation` label is the documented
 * operationId, the route pattern for the routes outside the API (health probes, docs), or
 * `unmatched`: a fixed set, whatever path a client sends.
 */
export function recordHttpMetrics(
  fastify: FastifyInstance,
  metrics: Metrics,
  operations: ReadonlyMap<string, string>,
): void {
  const seriesOfAnswer = requestDurationSeries(metrics, operations);

  // Routes are registered after this runs, so each deprecated one is seen with its Sunset header.
  fastify.addHook('onRoute', (route) => recordSunset(metrics, operations, route));

  // Error bodies are objects until serialized; this is where their code can be read.
  fastify.addHook('preSerialization', (_request, reply, payload, done) => {
    if (reply.statusCode >= 400) countError(metrics, payload);
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    seriesOfAnswer(request, reply.statusCode).observe(reply.elapsedTime / 1000);
    if (reply.getHeader('idempotent-replayed') === 'true') metrics.idempotentReplays.inc();
    done();
  });
}

/**
 * The request-duration series of an answer, found once per route, method and status class and
 * kept with the route: what a lookup by label values would build per request is what it costs.
 */
function requestDurationSeries(
  metrics: Metrics,
  operations: ReadonlyMap<string, string>,
): (request: FastifyRequest, statusCode: number) => HistogramSeries {
  const found = new WeakMap<MatchedRoute, Map<string, HistogramSeries[]>>();
  return (request, statusCode) => {
    const route = routeOf(request);
    let byMethod = found.get(route);
    if (byMethod === undefined) found.set(route, (byMethod = new Map<string, HistogramSeries[]>()));
    let byStatusClass = byMethod.get(request.method);
    if (byStatusClass === undefined) byMethod.set(request.method, (byStatusClass = []));
    const statusClass = Math.floor(statusCode / 100) - 1;
    return (byStatusClass[statusClass] ??= metrics.requestDuration.seriesOf({
      operation:
        route.url === undefined ? UNMATCHED : operationOf(operations, request.method, route.url),
      method: METHODS.has(request.method) ? request.method : 'other',
      status_class: STATUS_CLASSES[statusClass] ?? 'other',
    }));
  };
}

function operationOf(
  operations: ReadonlyMap<string, string>,
  method: string,
  route: string,
): string {
  return operations.get(`${method} ${route}`) ?? route;
}

function recordSunset(
  metrics: Metrics,
  operations: ReadonlyMap<string, string>,
  route: RouteOptions,
): void {
  const sunset = registeredHttpRouteConfig(route)?.responseHeaders?.Sunset;
  if (sunset === undefined) return;
  for (const method of [route.method].flat()) {
    const operation = operations.get(`${method} ${route.url}`);
    if (operation) metrics.sunsets.set({ operation }, Date.parse(sunset) / 1000);
  }
}

function countError(metrics: Metrics, payload: unknown): void {
  const code = (payload as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && Object.hasOwn(ERROR_CODES, code)) metrics.errors.inc({ code });
}
