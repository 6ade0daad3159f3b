import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { decodeCursor } from '../page-cursor.js';
import {
  ONE_OF_PET_STATUSES,
  PET_STATUS_SCHEMA,
  PET_STATUSES,
  type PetStatus,
} from '../pet-status.js';
import { decimalInteger, expecting } from './field-rules.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const LIMIT = expecting('limit', `a decimal integer from 1 to ${MAX_PAGE_SIZE}`, 'query');
const STATUS = expecting('status', ONE_OF_PET_STATUSES, 'query');
const CURSOR = expecting('cursor', 'a cursor taken from a Link rel="next" header', 'query');

export class ListPetsQueryDto {
  @ApiPropertyOptional({
    description: 'Maximum number of animals returned.',
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    example: DEFAULT_PAGE_SIZE,
  })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt(LIMIT)
  @Min(1, LIMIT)
  @Max(MAX_PAGE_SIZE, LIMIT)
  limit?: number;

  @ApiPropertyOptional({
    description: 'Restricts results to animals with that availability status.',
    ...PET_STATUS_SCHEMA,
  })
  @IsOptional()
  @IsIn(PET_STATUSES, STATUS)
  status?: PetStatus;

  @ApiPropertyOptional({
    description:
      'Opaque position in the list. Do not build it: follow the `Link: <…>; rel="next"` header of the previous page.',
  })
  @IsOptional()
  @ValidateBy(
    {
      name: 'isPageCursor',
      validator: { validate: (v) => typeof v === 'string' && decodeCursor(v) !== undefined },
    },
    CURSOR,
  )
  cursor?: string;
}
