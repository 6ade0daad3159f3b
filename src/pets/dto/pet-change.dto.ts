import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PET_STATUSES, type PetStatus } from '../pet-status.js';
import { PET_PROPERTIES } from './pet-properties.js';

/** `data.previous` of a pet.updated event (docs/events.md, "Events"). */
@ApiSchema({
  name: 'PetChange',
  description:
    'The old values of exactly the members a change changed; a status the pet did not have is `null`.',
})
export class PetChangeDto {
  @ApiPropertyOptional({
    ...PET_PROPERTIES.name,
    description: 'The name before the change.',
    required: false,
  })
  name?: string;

  @ApiPropertyOptional({
    ...PET_PROPERTIES.categoryId,
    description: 'The category before the change.',
    required: false,
  })
  categoryId?: number;

  @ApiPropertyOptional({
    description: 'The status before the change; `null` when the pet had none.',
    type: 'string',
    enum: PET_STATUSES,
    nullable: true,
    example: 'available',
  })
  status?: PetStatus | null;
}
