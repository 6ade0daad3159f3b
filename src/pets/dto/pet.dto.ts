import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { PetStatus } from '../pet-status.js';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { CATEGORY_ID_PROPERTY, NAME_PROPERTY, STATUS_PROPERTY } from './pet-properties.js';

@ApiSchema({
  name: 'Pet',
  description: 'An animal in the catalogue: all fields of NewPet plus its id.',
})
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

  @ApiProperty(NAME_PROPERTY)
  name: string;

  @ApiProperty(CATEGORY_ID_PROPERTY)
  categoryId: number;

  @ApiPropertyOptional(STATUS_PROPERTY)
  status?: PetStatus;
}
