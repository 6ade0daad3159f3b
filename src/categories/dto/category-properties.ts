import type { ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { NAME_MAX_LENGTH } from '../../http/name-rules.js';

/** A category's id: the int64 pets carry as `categoryId`, which a JSON client carries exactly. */
export const CATEGORY_ID_SCHEMA = {
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ID,
} as const;

/** The Category's properties in the order they are sent, written once for every DTO. */
export const CATEGORY_PROPERTIES = {
  id: {
    description: 'The category id pets carry as `categoryId`, chosen by the client.',
    ...CATEGORY_ID_SCHEMA,
    example: 1,
  },
  name: {
    description: `The category's name, unique in the store (compared exactly): 1 to ${NAME_MAX_LENGTH} characters (Unicode code points), not only whitespace, without U+0000.`,
    type: 'string',
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    example: 'Dogs',
  },
} as const satisfies Record<string, ApiPropertyOptions>;
