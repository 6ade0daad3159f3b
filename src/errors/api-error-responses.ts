import { applyDecorators } from '@nestjs/common';
import { ApiResponse, getSchemaPath } from '@nestjs/swagger';
import {
  DATABASE_UNAVAILABLE_MESSAGE,
  IDEMPOTENCY_KEY_REUSED_MESSAGE,
  INTERNAL_ERROR_MESSAGE,
  INVALID_API_KEY_MESSAGE,
  NOT_JSON_MESSAGE,
  webhookLimitMessage,
} from './api-error.js';
import { ERROR_CODE_NAMES, ERROR_CODES, type ErrorCode } from './error-codes.js';
import { ErrorDto } from './error.dto.js';

/** A typical message per code, so each documented error shows a body it really has. */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'categoryId must be a JSON integer from 1 to 9007199254740991',
  MALFORMED_JSON: 'Request body is not valid JSON',
  UNAUTHORIZED: INVALID_API_KEY_MESSAGE,
  FORBIDDEN: 'This API key lacks the scope pets:write',
  NOT_FOUND: 'No pet with id 42',
  METHOD_NOT_ALLOWED: 'Method DELETE is not allowed here; use GET, HEAD, POST',
  INVALID_TRANSITION: 'Pet 42 is sold: its status can no longer change (asked for available)',
  PET_HELD: 'Pet 42 is held by an open order: complete or cancel the order first',
  PET_NOT_AVAILABLE: 'Pet 42 is pending: only an available pet can be ordered',
  ORDER_NOT_OPEN: 'Order 7 is completed: only an open order can be completed or cancelled',
  CATEGORY_NAME_TAKEN: 'Another category is already named "Dogs": choose another name',
  WEBHOOK_LIMIT_REACHED: webhookLimitMessage(100),
  GONE: 'This operation was removed; the message names its replacement',
  CURSOR_EXPIRED:
    'Events after this cursor were deleted (older than 30 days); read the feed again without after',
  PRECONDITION_FAILED:
    'If-Match does not match the current ETag of pet 42: read the pet again, then retry',
  PAYLOAD_TOO_LARGE: 'Request body exceeds 16384 bytes',
  UNSUPPORTED_MEDIA_TYPE: NOT_JSON_MESSAGE,
  IDEMPOTENCY_KEY_REUSED: IDEMPOTENCY_KEY_REUSED_MESSAGE,
  RATE_LIMITED: 'Rate limit of 600 requests per minute exceeded; retry in 42 s',
  INTERNAL_ERROR: INTERNAL_ERROR_MESSAGE,
  SERVICE_UNAVAILABLE: DATABASE_UNAVAILABLE_MESSAGE,
};

/** The codes a status can carry, in the order of ERROR_CODES. */
function codesOf(status: number): ErrorCode[] {
  return ERROR_CODE_NAMES.filter((code) => ERROR_CODES[code].status === status);
}

/** What a status means in this API: its codes from ERROR_CODES, so the docs cannot drift from them. */
function describeStatus(status: number): string {
  return codesOf(status)
    .map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`)
    .join(' ');
}

/**
 * The Error body of a status, with an example per code: every code the status can carry, or, with
 * `messages`, only the codes they name, each with an operation's own message.
 */
export function errorContent(status: number, messages?: Partial<Record<ErrorCode, string>>) {
  const codes = messages ? (Object.keys(messages) as ErrorCode[]) : codesOf(status);
  const examples = Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: ERROR_CODES[code].meaning,
        value: { code, message: messages?.[code] ?? EXAMPLE_MESSAGES[code], status },
      },
    ]),
  );
  return { 'application/json': { schema: { $ref: getSchemaPath(ErrorDto) }, examples } };
}

/** Documents error responses, all with the Error body. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: describeStatus(status), content: errorContent(status) }),
    ),
  );
}
