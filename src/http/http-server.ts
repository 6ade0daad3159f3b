import type { FastifyInstance } from 'fastify';
import { closeConnectionsWhileClosing } from './graceful-close.js';
import { answerConditionally } from './conditional-get.js';
import { checkRequest } from './request-checks.js';
import { registerBodyParsers } from './request-body.js';
import { setResponseHeaders } from './response-headers.js';
import { markRequestsWithRoute, routeOf } from './route-config.js';
import type { RequestsInFlight } from './requests-in-flight.js';
import type { RouteTable } from './route-table.js';
import { answerExpectationsAndConnect } from './socket-answers.js';

/**
 * Wires what every request goes through; must run before routes are registered. One hook per
 * stage does all of that stage's work: each hook Fastify runs costs a call chain of its own.
 */
export function configureHttpServer(
  fastify: FastifyInstance,
  routes: RouteTable,
  inFlight: RequestsInFlight,
): void {
  inFlight.countOn(fastify);
  fastify.decorateRequest('matchedRoute', null);
  fastify.addHook('onRoute', (route) => {
    routes.add(route.method, route.url);
    markRequestsWithRoute(route);
  });
  const closing = closeConnectionsWhileClosing(fastify);
  registerBodyParsers(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    inFlight.arrive(request);
    checkRequest(request, reply, done);
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    inFlight.leave(request);
    const route = routeOf(request).config;
    setResponseHeaders(request, reply, route);
    if (closing()) reply.header('connection', 'close');
    done(null, answerConditionally(request, reply, payload, route));
  });
  answerExpectationsAndConnect(fastify.server);
}
