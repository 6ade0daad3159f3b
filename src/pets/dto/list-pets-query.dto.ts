import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CategoryIdFilter } from '../../http/category-id-filter.js';
import { expecting } from '../../http/field-messages.js';
import { PageLimit } from '../../http/page-limit.js';
import { PageCursor } from '../../http/page-cursor.js';
import {
  ONE_OF_PET_STATUSES,
  PET_STATUS_SCHEMA,
  PET_STATUSES,
  type PetStatus,
} from '../pet-status.js';

const STATUS = expecting('status', ONE_OF_PET_STATUSES, 'query');

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

  @CategoryIdFilter(
    'Restricts results to animals of that category (with `status`, to those that match both).',
  )
  categoryId?: number;

  /** The id of the last row of the previous page, decoded from the opaque cursor. */
  @PageCursor()
  cursor?: number;
}
