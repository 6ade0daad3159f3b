import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PET_STATUSES, type PetStatus } from '../pet-status.js';
import { MAX_ID } from './field-rules.js';

@ApiSchema({ name: 'Pet', description: 'An animal in the catalogue: all fields of NewPet plus its id.' })
export class PetDto {
  @ApiProperty({
    description: 'Unique identifier assigned by the service on creation.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
    example: 42,
  })
  id: number;

  @ApiProperty({ description: "The animal's name.", minLength: 1, maxLength: 255, example: 'Rex' })
  name: string;

  @ApiProperty({
    description: 'Identifier of the category the animal belongs to.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
    example: 1,
  })
  categoryId: number;

  @ApiPropertyOptional({
    description: 'Availability status; absent when none was given.',
    enum: PET_STATUSES,
    enumName: 'PetStatus',
    example: 'available',
  })
  status?: PetStatus;
}
