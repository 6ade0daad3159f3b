import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiSchema } from '@nestjs/swagger';
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

  @ApiProperty({ description: 'The HTTP status code, repeated.', type: 'integer', format: 'int32', example: 400 })
  status: number;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter or the body is invalid (`VALIDATION_FAILED`), or the body is not JSON (`MALFORMED_JSON`).',
  401: 'API key missing or invalid (`UNAUTHORIZED`).',
  404: 'The requested resource could not be found (`NOT_FOUND`).',
  413: 'The body is larger than the service accepts (`PAYLOAD_TOO_LARGE`).',
  415: 'The body is not `application/json` (`UNSUPPORTED_MEDIA_TYPE`).',
  500: 'Unexpected error (`INTERNAL_ERROR`).',
  503: 'The database is unreachable; retry later (`SERVICE_UNAVAILABLE`).',
};

/** Documents error responses, all with the Error body. */
export function ApiErrorResponses(...statuses: (keyof typeof DESCRIPTIONS)[]) {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: DESCRIPTIONS[status], type: ErrorDto })),
  );
}
