import { HttpException } from '@nestjs/common';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { ApiError } from './api-error.js';

/**
 * Turns anything thrown while serving a request into the ApiError the client sees. Only our own
 * ApiErrors carry their message through; everything else gets a fixed message, so no framework,
 * driver or SQL text reaches the client.
 */
export function toApiError(exception: unknown, bodyLimitBytes: number): ApiError {
  if (exception instanceof ApiError) return exception;
  switch (clientErrorStatus(exception)) {
    case undefined:
      return isDatabaseUnavailable(exception)
        ? new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', { 'Retry-After': '1' })
        : new ApiError('INTERNAL_ERROR', 'Internal server error');
    case 404:
      return new ApiError('NOT_FOUND', 'The requested resource could not be found');
    case 413:
      return new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${bodyLimitBytes} bytes`);
    case 415:
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 503:
      return new ApiError('SERVICE_UNAVAILABLE', 'The service is unavailable; retry later', { 'Retry-After': '1' });
    default:
      return new ApiError('VALIDATION_FAILED', 'The request is malformed');
  }
}

/**
 * The 4xx (or 503) status of an exception raised by Nest or Fastify for a bad request;
 * undefined for anything that is our fault.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  const status =
    exception instanceof HttpException ? exception.getStatus() : (exception as { statusCode?: unknown })?.statusCode;
  if (typeof status !== 'number') return undefined;
  return (status >= 400 && status < 500) || status === 503 ? status : undefined;
}
