import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { ONE_OF_PET_STATUSES, PET_STATUSES, type PetStatus } from '../pet-status.js';
import { expecting } from '../../http/field-messages.js';
import { IsName, NAME_MAX_LENGTH } from '../../http/name-rules.js';
import { PET_PROPERTIES } from './pet-properties.js';

export const NAME = expecting(
  'name',
  `a string of 1 to ${NAME_MAX_LENGTH} characters, not only whitespace, without U+0000`,
);
export const CATEGORY_ID = expecting('categoryId', `a JSON integer from 1 to ${MAX_ID}`);
const STATUS = expecting('status', `${ONE_OF_PET_STATUSES} (or absent)`);

@ApiSchema({ name: 'NewPet', description: 'An animal to add to the catalogue.' })
export class NewPetDto {
  @ApiProperty(PET_PROPERTIES.name)
  @IsName(NAME)
  name: string;

  @ApiProperty(PET_PROPERTIES.categoryId)
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId: number;

  @ApiProperty(PET_PROPERTIES.status)
  // Absent is allowed, null is not: @IsOptional would let null through.
  @ValidateIf((_pet, value) => value !== undefined)
  @IsIn(PET_STATUSES, STATUS)
  status?: PetStatus;
}
