import type { ArgumentsHost } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The request of a guard's, decorator's or filter's context: the first of its arguments. Read by
 * index, not through `switchToHttp()`, which makes three closures on every call, several a request.
 */
export function requestOf(context: ArgumentsHost): FastifyRequest {
  return context.getArgByIndex<FastifyRequest>(0);
}

/** The reply of a guard's, decorator's or filter's context: the second of its arguments. */
export function replyOf(context: ArgumentsHost): FastifyReply {
  return context.getArgByIndex<FastifyReply>(1);
}
