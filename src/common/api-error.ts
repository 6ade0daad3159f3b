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

export const validationFailed = (message: string): ApiError =>
  new ApiError('VALIDATION_FAILED', message);

/** Every 401 carries the challenge (RFC 6750 via api-decisions §2). */
export const unauthorized = (message: string): ApiError =>
  new ApiError('UNAUTHORIZED', message, { 'WWW-Authenticate': WWW_AUTHENTICATE });

export const notFound = (message: string): ApiError => new ApiError('NOT_FOUND', message);
