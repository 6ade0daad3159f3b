import type { ApiPropertyOptions } from '@nestjs/swagger';
import { PET_STATUSES } from '../pet-status.js';
import { MAX_ID } from '../../http/canonical-decimal.js';

/** Documentation of the fields NewPet and Pet share, written once. */
export const NAME_PROPERTY: ApiPropertyOptions = {
  description:
    "The animal's name: 1 to 255 characters (Unicode code points), not only whitespace, without U+0000.",
  minLength: 1,
  maxLength: 255,
  example: 'Rex',
};

export const CATEGORY_ID_PROPERTY: ApiPropertyOptions = {
  description: 'Identifier of the category the animal belongs to.',
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ID,
  example: 1,
};

export const STATUS_PROPERTY: ApiPropertyOptions = {
  description: 'Availability status. No default: when none is given, the pet has no status field.',
  enum: PET_STATUSES,
  enumName: 'PetStatus',
  example: 'available',
};
