import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { ONE_OF_PET_STATUSES, PET_STATUSES, type PetStatus } from '../pet-status.js';
import { expecting } from '../../http/field-messages.js';
import { IsName } from '../../http/name-rules.js';
import { CATEGORY_ID, NAME } from './new-pet.dto.js';
import { PET_PROPERTIES } from './pet-properties.js';

const STATUS = expecting('status', `${ONE_OF_PET_STATUSES} (a status cannot be removed)`);

/** Absent members are left as they are; present ones, null included, must pass NewPet's rules. */
const present = (_patch: object, value: unknown) => value !== undefined;

/** The members a patch may name, in the order messages list them. */
export const PATCHABLE_FIELDS = ['name', 'categoryId', 'status'] as const;

@ApiSchema({
  name: 'PetPatch',
  description:
    "A JSON Merge Patch (RFC 7396) of a Pet: the members to change, with NewPet's rules. At least " +
    'one; `null` removes nothing (every member is required or, for status, cannot be removed) and ' +
    'is refused, as is any other member.',
})
export class PetPatchDto {
  @ApiProperty({ ...PET_PROPERTIES.name, required: false })
  @ValidateIf(present)
  @IsName(NAME)
  name?: string;

  @ApiProperty({ ...PET_PROPERTIES.categoryId, required: false })
  @ValidateIf(present)
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId?: number;

  @ApiProperty({
    ...PET_PROPERTIES.status,
    description:
      "The status to move to; the allowed changes are in the operation's description. Naming the " +
      'status the pet already has is refused (409).',
    required: false,
  })
  @ValidateIf(present)
  @IsIn(PET_STATUSES, STATUS)
  status?: PetStatus;
}
