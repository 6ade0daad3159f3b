import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { decimalInteger, expecting } from '../../http/field-messages.js';
import { PageLimit } from '../../http/page-limit.js';
import { PageCursor } from '../../http/page-cursor.js';
import {
  ONE_OF_PET_STATUSES,
  PET_STATUS_SCHEMA,
  PET_STATUSES,
  type PetStatus,
} from '../pet-status.js';

const STATUS = expecting('status', ONE_OF_PET_STATUSES, 'query');
const CATEGORY_ID = expecting('categoryId', `a decimal integer from 1 to ${MAX_ID}`, 'query');

export class ListPetsQueryDto {
  @PageLimit('Maximum number of animals returned.')
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
      'Restricts results to animals of that category (with `status`, to those that match both).',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
  })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId?: number;

  @PageCursor()
  cursor?: string;
}
