import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config.js';
import { DOCS_PATH } from '../docs/openapi.js';
import { RouteTable } from '../http/route-table.js';
import { ApiError } from './api-error.js';
import { toApiError } from './error-mapping.js';

/**
 * The one exception filter (APP_FILTER): every failure, from the guard, a pipe, the body parser,
 * the router, the database or a bug, leaves as the Error body `{code, message, status}`.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    private readonly config: AppConfig,
    private readonly routes: RouteTable,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = isRouteMiss(exception, request)
      ? this.unmatchedRoute(request)
      : toApiError(exception, this.config.bodyLimitBytes);
    if (error.getStatus() >= 500) request.log.error({ err: exception }, 'request failed');
    if (reply.sent) return;
    reply
      .status(error.getStatus())
      .headers(error.headers)
      .type('application/json')
      .send(error.body);
  }

  private unmatchedRoute(request: FastifyRequest): ApiError {
    const allowed = this.routes.allowedMethods(request.url);
    // A route for this very method found nothing (a missing file under /docs, /docs/LICENSE).
    if (allowed.length === 0 || allowed.includes(request.method))
      return new ApiError('NOT_FOUND', 'No such route');
    const methods = allowed.join(', ');
    return new ApiError(
      'METHOD_NOT_ALLOWED',
      `Method ${request.method} is not allowed here; use ${methods}`,
      { Allow: methods },
    );
  }
}

/**
 * Whether this NotFoundException means "no such route" rather than "no such resource". Nest's
 * not-found handler throws one for every request Fastify hands to its 404 handler, and Fastify says
 * so with `request.is404`: no route matched, or a route passed the request on (@fastify/static
 * under /docs found no such file). Swagger UI's own `/docs/LICENSE` route throws a bare one to hide
 * that file. Any other NotFoundException comes from a handler of ours and keeps its message; any
 * other error raised while a route miss is answered keeps its own answer (a body over the size
 * limit is still a 413).
 */
function isRouteMiss(exception: unknown, request: FastifyRequest): boolean {
  if (!(exception instanceof NotFoundException)) return false;
  return request.is404 || (request.routeOptions.url?.startsWith(`/${DOCS_PATH}/`) ?? false);
}
