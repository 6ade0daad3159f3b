import type { ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { PET_STATUS_SCHEMA } from '../pet-status.js';
import { NAME_MAX_LENGTH } from '../../http/name-rules.js';

/** An int64 id as a JSON client carries it exactly. */
export const ID_SCHEMA = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID } as const;

/** A Pet property: its documentation, with the JSON type and presence the serializer needs too. */
type PetProperty = ApiPropertyOptions & { type: 'integer' | 'string'; required: boolean };

/**
 * The Pet's properties in the order they are sent, written once: PetDto and NewPetDto document
 * their fields with these options, and Fastify's serializer schema is made from them
 * (pet-response.schema.ts).
 */
export const PET_PROPERTIES = {
  id: {
    description: 'Unique identifier assigned by the service on creation.',
    ...ID_SCHEMA,
    example: 42,
    required: true,
  },
  name: {
    description: `The animal's name: 1 to ${NAME_MAX_LENGTH} characters (Unicode code points), not only whitespace, without U+0000.`,
    type: 'string',
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    example: 'Rex',
    required: true,
  },
  categoryId: {
    description: 'Identifier of the category the animal belongs to.',
    ...ID_SCHEMA,
    example: 1,
    required: true,
  },
  status: {
    description:
      'Availability status. No default: when none is given, the pet has no status field.',
    type: 'string',
    ...PET_STATUS_SCHEMA,
    example: 'available',
    required: false,
  },
} as const satisfies Record<string, PetProperty>;
