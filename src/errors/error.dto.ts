import { ApiProperty, ApiSchema } from '@nestjs/swagger';
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
