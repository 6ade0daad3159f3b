import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import {
  DATABASE_UNAVAILABLE_MESSAGE,
  INTERNAL_ERROR_MESSAGE,
  INVALID_API_KEY_MESSAGE,
  NOT_JSON_MESSAGE,
} from './api-error.js';
import { ERROR_CODE_NAMES, ERROR_CODES, type ErrorCode } from './error-codes.js';

@ApiSchema({ name: 'Error', description: 'The body of every error response.' })
export class ErrorDto {
  @ApiProperty({
    description: `Machine-readable error code:\n${ERROR_CODE_NAMES.map((c) => `- \`${c}\` (${ERROR_CODES[c].status}): ${ERROR_CODES[c].meaning}`).join('\n')}`,
    enum: ERROR_CODE_NAMES,
    enumName: 'ErrorCode',
    example: 'VALIDATION_FAILED',
  })
  code: ErrorCode;

  @ApiProperty({ description: 'Human-readable description.', example: 'name is required' })
  message: string;

  @ApiProperty({
    description: 'The HTTP status code, repeated.',
    type: 'integer',
    format: 'int32',
    example: 400,
  })
  status: number;
}

/** What a status means in this API: its codes from ERROR_CODES, so the docs cannot drift from them. */
function describeStatus(status: number): string {
  return ERROR_CODE_NAMES.filter((code) => ERROR_CODES[code].status === status)
    .map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`)
    .join(' ');
}

/** A typical message per code, so each documented error shows a body it really has. */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'categoryId must be a JSON integer from 1 to 9007199254740991',
  MALFORMED_JSON: 'Request body is not valid JSON',
  UNAUTHORIZED: INVALID_API_KEY_MESSAGE,
  NOT_FOUND: 'No pet with id 42',
  METHOD_NOT_ALLOWED: 'Method DELETE is not allowed here; use GET, HEAD, POST',
  IDEMPOTENCY_CONFLICT: 'A request with this Idempotency-Key is still in flight',
  PAYLOAD_TOO_LARGE: 'Request body exceeds 16384 bytes',
  UNSUPPORTED_MEDIA_TYPE: NOT_JSON_MESSAGE,
  IDEMPOTENCY_KEY_REUSED: 'This Idempotency-Key was already used with a different request body',
  RATE_LIMITED: 'Rate limit of 600 requests per minute exceeded; retry in 42 s',
  INTERNAL_ERROR: INTERNAL_ERROR_MESSAGE,
  SERVICE_UNAVAILABLE: DATABASE_UNAVAILABLE_MESSAGE,
};

/** The Error body of a status, with one example per code that status can carry. */
export function errorContent(status: number) {
  const examples = Object.fromEntries(
    ERROR_CODE_NAMES.filter((code) => ERROR_CODES[code].status === status).map((code) => [
      code,
      {
        summary: ERROR_CODES[code].meaning,
        value: { code, message: EXAMPLE_MESSAGES[code], status },
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
