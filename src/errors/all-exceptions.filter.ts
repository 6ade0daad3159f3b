import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config.js';
import { RouteMethods } from './route-methods.js';
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
    private readonly routes: RouteMethods,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // Our handlers answer a missing resource with ApiError('NOT_FOUND'): a bare NotFoundException is
    // always the framework's "no such route" (Fastify's 404 handler, a docs asset's file not found).
    const error =
      exception instanceof NotFoundException
        ? this.unmatchedRoute(request)
        : toApiError(exception, this.config.bodyLimitBytes);
    const status = error.getStatus();
    // The status tells an operator a bug (500) from the database being away (503).
    if (status >= 500) request.log.error({ err: exception, status }, 'request failed');
    if (reply.sent) return;
    reply.status(status).headers(error.headers).type('application/json').send(error.body);
  }

  private unmatchedRoute(request: FastifyRequest): ApiError {
    const allowed = this.routes.allowedMethods(request.url);
    // A route for this very method found nothing (a docs asset whose file is missing).
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
