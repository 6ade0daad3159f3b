import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config.js';
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
    const error = this.describe(exception, request);
    if (error.getStatus() >= 500) request.log.error({ err: exception }, 'request failed');
    if (reply.sent) return;
    reply
      .status(error.getStatus())
      .headers(error.headers)
      .type('application/json')
      .send(error.body);
  }

  private describe(exception: unknown, request: FastifyRequest): ApiError {
    // Nest's router answers unknown routes with a NotFoundException of its own.
    if (exception instanceof NotFoundException) {
      return this.unmatchedRoute(request);
    }
    return toApiError(exception, this.config.bodyLimitBytes);
  }

  private unmatchedRoute(request: FastifyRequest): ApiError {
    const allowed = this.routes.allowedMethods(request.url);
    // A route for this very method answered 404 itself (a missing file under /docs).
    if (allowed.length === 0 || allowed.includes(request.method))
      return new ApiError('NOT_FOUND', 'No such route');
    return new ApiError(
      'METHOD_NOT_ALLOWED',
      `Method ${request.method} is not allowed here; use ${allowed.join(', ')}`,
      {
        Allow: allowed.join(', '),
      },
    );
  }
}
