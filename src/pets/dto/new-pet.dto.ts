import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { PET_STATUSES, type PetStatus } from '../pet-status.js';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { expecting, IsPetName } from './field-rules.js';
import { CATEGORY_ID_PROPERTY, NAME_PROPERTY, STATUS_PROPERTY } from './pet-properties.js';

const NAME = expecting(
  'name',
  'a string of 1 to 255 characters, not only whitespace, without U+0000',
);
const CATEGORY_ID = expecting('categoryId', `a JSON integer from 1 to ${MAX_ID}`);
const STATUS = expecting('status', `one of ${PET_STATUSES.join(', ')} (or absent)`);

@ApiSchema({ name: 'NewPet', description: 'An animal to add to the catalogue.' })
export class NewPetDto {
  @ApiProperty(NAME_PROPERTY)
  @IsPetName(NAME)
  name: string;

  @ApiProperty(CATEGORY_ID_PROPERTY)
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId: number;

  @ApiPropertyOptional(STATUS_PROPERTY)
  // Absent is allowed, null is not: @IsOptional would let null through.
  @ValidateIf((_pet, value) => value !== undefined)
  @IsIn(PET_STATUSES, STATUS)
  status?: PetStatus;
}
