import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { PET_STATUSES, type PetStatus } from '../pet-status.js';
import { expecting, IsPetName, MAX_ID } from './field-rules.js';

const NAME = expecting('name', 'a string of 1 to 255 characters, not only whitespace, without U+0000');
const CATEGORY_ID = expecting('categoryId', `a JSON integer from 1 to ${MAX_ID}`);
const STATUS = expecting('status', `one of ${PET_STATUSES.join(', ')} (or absent)`);

@ApiSchema({ name: 'NewPet', description: 'An animal to add to the catalogue.' })
export class NewPetDto {
  @ApiProperty({ description: "The animal's name.", minLength: 1, maxLength: 255, example: 'Rex' })
  @IsPetName(NAME)
  name: string;

  @ApiProperty({
    description: 'Identifier of the category the animal belongs to.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
    example: 1,
  })
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId: number;

  @ApiPropertyOptional({
    description: 'Availability status. No default: when absent it stays absent.',
    enum: PET_STATUSES,
    enumName: 'PetStatus',
    example: 'available',
  })
  // Absent is allowed, null is not: @IsOptional would let null through.
  @ValidateIf((_pet, value) => value !== undefined)
  @IsIn(PET_STATUSES, STATUS)
  status?: PetStatus;
}
