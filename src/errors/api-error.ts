import { HttpException } from '@nestjs/common';
import { ERROR_CODES, ErrorCode } from './error-codes.js';

/** The wire shape of every error response. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

/** An error whose code, message and headers are meant for the client as they are. */
export class ApiError extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    const status = ERROR_CODES[code].status;
    super({ code, message, status } satisfies ErrorBody, status);
  }

  get body(): ErrorBody {
    return this.getResponse() as ErrorBody;
  }
}

export const WWW_AUTHENTICATE = 'Bearer realm="animal-store"';

/** Messages more than one part of the service sends, each written once. */
export const INVALID_API_KEY_MESSAGE = 'Invalid API key';
export const NOT_JSON_MESSAGE = 'Content-Type must be application/json';
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; retry later';
export const INTERNAL_ERROR_MESSAGE = 'Internal server error';
export const IDEMPOTENCY_KEY_REUSED_MESSAGE =
  'This Idempotency-Key was already used with a different request body';

export const validationFailed = (message: string): ApiError =>
  new ApiError('VALIDATION_FAILED', message);

/** Every 401 carries the Bearer challenge (RFC 6750 §3). */
export const unauthorized = (message: string): ApiError =>
  new ApiError('UNAUTHORIZED', message, { 'WWW-Authenticate': WWW_AUTHENTICATE });

export const notFound = (message: string): ApiError => new ApiError('NOT_FOUND', message);

export const webhookLimitMessage = (max: number): string =>
  `The store has ${max} webhooks, the most it may have: delete one first`;

export const webhookLimitReached = (max: number): ApiError =>
  new ApiError('WEBHOOK_LIMIT_REACHED', webhookLimitMessage(max));

export const notJson = (): ApiError => new ApiError('UNSUPPORTED_MEDIA_TYPE', NOT_JSON_MESSAGE);

/** The 415 of a route that takes more than JSON: it names each type, and `headers` go along. */
export const unsupportedMediaType = (
  types: readonly string[],
  headers: Record<string, string> = {},
): ApiError =>
  new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${types.join(' or ')}`, headers);

/**
 * The database is the only thing whose absence makes the service unavailable, so every 503 says
 * so, and asks the client to retry soon: a reconnect usually takes about a second.
 */
export const databaseUnavailable = (): ApiError =>
  new ApiError('SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_MESSAGE, { 'Retry-After': '1' });
