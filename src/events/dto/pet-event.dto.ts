import { ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import {
  CATEGORY_EVENT_TYPES,
  type CategoryEventType,
  ORDER_EVENT_TYPES,
  type OrderEventType,
  PET_EVENT_TYPES,
  type PetEventType,
} from '../pet-event.js';

/**
 * The Pet, PetChange, Category and Order schemas, which the pets, categories and orders features
 * document.
 */
const PET_SCHEMA = '#/components/schemas/Pet';
const PET_CHANGE_SCHEMA = '#/components/schemas/PetChange';
const CATEGORY_SCHEMA = '#/components/schemas/Category';
const ORDER_SCHEMA = '#/components/schemas/Order';

const EVENT_ID = {
  description:
    'Opaque id, at most 64 characters of `A-Za-z0-9_-`: the feed cursor (`after`), the stream `id:` line and `Last-Event-ID`.',
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  example: '7301-42',
};

const EVENT_TIMESTAMP = {
  description: 'When the change was made: RFC 3339, UTC, with milliseconds.',
  type: 'string',
  format: 'date-time',
  example: '2026-11-25T18:04:05.123Z',
} as const;

@ApiSchema({ name: 'PetEventData', description: 'What changed.' })
export class PetEventDataDto {
  @ApiProperty({ description: 'The pet after the change.', allOf: [{ $ref: PET_SCHEMA }] })
  pet: object;

  @ApiPropertyOptional({
    description:
      'pet.updated only: the changed members before the change. pet.deleted carries the pet as it was, and no previous.',
    allOf: [{ $ref: PET_CHANGE_SCHEMA }],
  })
  previous?: object;
}

@ApiSchema({
  name: 'PetEvent',
  description:
    'A committed change of a pet. Events have one order, the order of their commits; the feed and the stream serve them in it.',
})
export class PetEventDto {
  @ApiProperty(EVENT_ID)
  id: string;

  @ApiProperty({ description: 'What happened.', enum: PET_EVENT_TYPES, enumName: 'PetEventType' })
  type: PetEventType;

  @ApiProperty(EVENT_TIMESTAMP)
  timestamp: string;

  @ApiProperty({ type: () => PetEventDataDto })
  data: PetEventDataDto;
}

@ApiSchema({ name: 'CategoryNameChange', description: "A category's name before the change." })
export class CategoryNameChangeDto {
  @ApiProperty({ description: 'The name before the change.', type: 'string', example: 'Dogs' })
  name: string;
}

@ApiSchema({ name: 'CategoryEventData', description: 'What changed.' })
export class CategoryEventDataDto {
  @ApiProperty({
    description:
      'category.updated: the Category after the change; category.deleted: the Category as it was.',
    allOf: [{ $ref: CATEGORY_SCHEMA }],
  })
  category: object;

  @ApiPropertyOptional({
    description: 'category.updated of a category that had a name: that name.',
    type: () => CategoryNameChangeDto,
  })
  previous?: CategoryNameChangeDto;
}

@ApiSchema({
  name: 'CategoryEvent',
  description:
    "A committed change of a category's name, in the same one order as the events of pets.",
})
export class CategoryEventDto {
  @ApiProperty(EVENT_ID)
  id: string;

  @ApiProperty({
    description: 'What happened.',
    enum: CATEGORY_EVENT_TYPES,
    enumName: 'CategoryEventType',
  })
  type: CategoryEventType;

  @ApiProperty(EVENT_TIMESTAMP)
  timestamp: string;

  @ApiProperty({ type: () => CategoryEventDataDto })
  data: CategoryEventDataDto;
}

@ApiSchema({ name: 'OrderEventData', description: 'What changed.' })
export class OrderEventDataDto {
  @ApiProperty({ description: 'The order after the change.', allOf: [{ $ref: ORDER_SCHEMA }] })
  order: object;
}

@ApiSchema({
  name: 'OrderEvent',
  description:
    'A committed change of an order, in the same one order as the events of pets. Each is followed by its pet’s pet.updated, committed together.',
})
export class OrderEventDto {
  @ApiProperty(EVENT_ID)
  id: string;

  @ApiProperty({
    description: 'What happened.',
    enum: ORDER_EVENT_TYPES,
    enumName: 'OrderEventType',
  })
  type: OrderEventType;

  @ApiProperty(EVENT_TIMESTAMP)
  timestamp: string;

  @ApiProperty({ type: () => OrderEventDataDto })
  data: OrderEventDataDto;
}

/** Each kind of event with the schema of its events. */
const EVENT_SCHEMAS = [
  [PET_EVENT_TYPES, getSchemaPath(PetEventDto)],
  [CATEGORY_EVENT_TYPES, getSchemaPath(CategoryEventDto)],
  [ORDER_EVENT_TYPES, getSchemaPath(OrderEventDto)],
] as const;

/**
 * An event of the feed, the stream and webhook deliveries: about a pet, a category or an order, as
 * its `type` says.
 */
export const EVENT_SCHEMA = {
  oneOf: EVENT_SCHEMAS.map(([, $ref]) => ({ $ref })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries<string>(
      EVENT_SCHEMAS.flatMap(([types, $ref]) => types.map((type): [string, string] => [type, $ref])),
    ),
  },
};
