import type { FastifyInstance } from 'fastify';
import { closeConnectionsWhileClosing } from './graceful-close.js';
import { answerConditionally } from './conditional-get.js';
import { checkRequest } from './request-checks.js';
import { registerBodyParsers } from './request-body.js';
import { setResponseHeaders } from './response-headers.js';
import { httpRouteConfig } from './route-config.js';
import type { RequestsInFlight } from './requests-in-flight.js';
import type { RouteTable } from './route-table.js';
import { answerExpectationsAndConnect } from './socket-answers.js';

/** Wires what every request goes through; must run before routes are registered. */
export function configureHttpServer(
  fastify: FastifyInstance,
  routes: RouteTable,
  inFlight: RequestsInFlight,
): void {
  inFlight.countOn(fastify);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  registerBodyParsers(fastify);
  fastify.addHook('onRequest', checkRequest);
  fastify.addHook('onSend', (request, reply, payload, done) => {
    // Fastify builds `routeOptions` anew on each read, so the route's config is read once here.
    const route = httpRouteConfig(request);
    setResponseHeaders(request, reply, route);
    done(null, answerConditionally(request, reply, payload, route));
  });
  closeConnectionsWhileClosing(fastify);
  answerExpectationsAndConnect(fastify.server);
}
