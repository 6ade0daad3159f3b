import { HttpException } from '@nestjs/common';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import {
  ApiError,
  databaseUnavailable,
  INTERNAL_ERROR_MESSAGE,
  INVALID_API_KEY_MESSAGE,
  notJson,
  unauthorized,
} from './api-error.js';
import { ERROR_CODE_NAMES, ERROR_CODES, type ErrorCode } from './error-codes.js';

/** The first code of each status in ERROR_CODES is the one a bare status maps to. */
const CODE_FOR_STATUS = new Map<number, ErrorCode>(
  [...ERROR_CODE_NAMES].reverse().map((code) => [ERROR_CODES[code].status, code]),
);

const FIXED_MESSAGES: Partial<Record<ErrorCode, string>> = {
  VALIDATION_FAILED: 'The request is malformed',
  FORBIDDEN: 'This API key may not perform this operation',
  NOT_FOUND: 'The requested resource could not be found',
};

/**
 * Turns anything thrown while serving a request into the ApiError the client sees. Our own
 * ApiErrors carry their message through; everything else gets a fixed message, so no framework,
 * driver or SQL text reaches the client.
 */
export function toApiError(exception: unknown, bodyLimitBytes: number): ApiError {
  if (exception instanceof ApiError) return exception;
  const status = clientErrorStatus(exception);
  if (status !== undefined) return fromStatus(status, bodyLimitBytes);
  return isDatabaseUnavailable(exception)
    ? databaseUnavailable()
    : new ApiError('INTERNAL_ERROR', INTERNAL_ERROR_MESSAGE);
}

/** The error for a bare HTTP status; a 4xx we have no code for is a plain 400. */
function fromStatus(status: number, bodyLimitBytes: number): ApiError {
  const code = CODE_FOR_STATUS.get(status) ?? 'VALIDATION_FAILED';
  switch (code) {
    case 'UNAUTHORIZED':
      return unauthorized(INVALID_API_KEY_MESSAGE);
    case 'PAYLOAD_TOO_LARGE':
      return new ApiError(code, `Request body exceeds ${bodyLimitBytes} bytes`);
    case 'UNSUPPORTED_MEDIA_TYPE':
      return notJson();
    case 'SERVICE_UNAVAILABLE':
      return databaseUnavailable();
    default:
      return new ApiError(code, FIXED_MESSAGES[code] ?? ERROR_CODES[code].meaning);
  }
}

/**
 * The 4xx (or 503) status of an exception raised by Nest or Fastify for a bad request;
 * undefined for anything that is our fault.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  const status =
    exception instanceof HttpException
      ? exception.getStatus()
      : (exception as { statusCode?: unknown })?.statusCode;
  if (typeof status !== 'number') return undefined;
  return (status >= 400 && status < 500) || status === 503 ? status : undefined;
}
