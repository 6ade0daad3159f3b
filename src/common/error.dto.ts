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

/** Documents error responses, all with the Error body. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: describeStatus(status), type: ErrorDto }),
    ),
  );
}
