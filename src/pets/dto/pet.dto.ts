import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { PetStatus } from '../pet-status.js';
import { PET_PROPERTIES } from './pet-properties.js';

@ApiSchema({
  name: 'Pet',
  description: 'An animal in the catalogue: all fields of NewPet plus its id.',
})
export class PetDto {
  @ApiProperty(PET_PROPERTIES.id)
  id: number;

  @ApiProperty(PET_PROPERTIES.name)
  name: string;

  @ApiProperty(PET_PROPERTIES.categoryId)
  categoryId: number;

  @ApiProperty(PET_PROPERTIES.status)
  status?: PetStatus;
}
