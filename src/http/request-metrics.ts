import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { ERROR_CODES } from '../errors/error-codes.js';
import { registeredHttpRouteConfig } from './route-config.js';
import type { Metrics } from '../metrics/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation of the route that took the request, set by that route's own hook. */
    metricsOperation: string | null;
  }
}

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
  const operationOfRequest = (request: FastifyRequest): string | undefined =>
    request.metricsOperation ?? operationOfRoute(operations, request);

  // Routes are registered after this runs, so each deprecated one is seen with its Sunset header.
  fastify.decorateRequest('metricsOperation', null);
  fastify.addHook('onRoute', (route) => {
    recordSunset(metrics, operations, route);
    tagRequestsWithOperation(operations, route);
  });

  // Error bodies are objects until serialized; this is where their code can be read.
  fastify.addHook('preSerialization', (_request, reply, payload, done) => {
    if (reply.statusCode >= 400) countError(metrics, payload);
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const operation = operationOfRequest(request);
    metrics.requestDuration.observe(
      {
        operation: operation ?? UNMATCHED,
        method: METHODS.has(request.method) ? request.method : 'other',
        status_class: STATUS_CLASSES[Math.floor(reply.statusCode / 100) - 1] ?? 'other',
      },
      reply.elapsedTime / 1000,
    );
    if (reply.getHeader('idempotent-replayed') === 'true') metrics.idempotentReplays.inc();
    done();
  });
}

/**
 * Gives the route a hook of its own that tags each of its requests with the route's operation,
 * found once here: looking it up per response would read `request.routeOptions`, which Fastify
 * builds anew on every read.
 */
function tagRequestsWithOperation(
  operations: ReadonlyMap<string, string>,
  route: RouteOptions,
): void {
  const byMethod = new Map(
    [route.method]
      .flat()
      .map((method) => [method, operationOf(operations, method, route.url)] as const),
  );
  const tag: onRequestHookHandler = (request, _reply, done) => {
    request.metricsOperation = byMethod.get(request.method) ?? null;
    done();
  };
  route.onRequest = [route.onRequest ?? []].flat().concat(tag);
}

/**
 * The operation of a request its route's hook did not tag: one that no route matched, or that an
 * earlier `onRequest` hook answered (a malformed request, refused before the route's hook ran).
 */
function operationOfRoute(
  operations: ReadonlyMap<string, string>,
  request: FastifyRequest,
): string | undefined {
  const route = request.routeOptions.url;
  if (route === undefined || request.is404) return undefined;
  return operationOf(operations, request.method, route);
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
