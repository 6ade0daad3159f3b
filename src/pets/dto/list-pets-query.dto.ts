import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, ValidateBy } from 'class-validator';
import { expecting } from '../../http/field-messages.js';
import { PageLimit } from '../../http/page-limit.js';
import { decodeCursor } from '../../http/page-cursor.js';
import {
  ONE_OF_PET_STATUSES,
  PET_STATUS_SCHEMA,
  PET_STATUSES,
  type PetStatus,
} from '../pet-status.js';

const STATUS = expecting('status', ONE_OF_PET_STATUSES, 'query');
const CURSOR = expecting('cursor', 'a cursor taken from a Link rel="next" header', 'query');

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
