import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { EVENT_TYPES, type EventType } from '../pet-event.js';

/** The Pet, PetChange and Order schemas, which the pets and orders features document. */
const PET_SCHEMA = '#/components/schemas/Pet';
const PET_CHANGE_SCHEMA = '#/components/schemas/PetChange';
const ORDER_SCHEMA = '#/components/schemas/Order';

@ApiSchema({ name: 'PetEventData', description: 'What changed.' })
export class PetEventDataDto {
  @ApiPropertyOptional({
    description: 'pet.* events: the pet after the change.',
    allOf: [{ $ref: PET_SCHEMA }],
  })
  pet?: object;

  @ApiPropertyOptional({
    description: 'order.* events: the order after the change.',
    allOf: [{ $ref: ORDER_SCHEMA }],
  })
  order?: object;

  @ApiPropertyOptional({
    description: 'pet.updated only: the changed members before the change.',
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
  @ApiProperty({
    description:
      'Opaque id, at most 64 characters of `A-Za-z0-9_-`: the feed cursor (`after`), the stream `id:` line and `Last-Event-ID`.',
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    example: '7301-42',
  })
  id: string;

  @ApiProperty({
    description:
      'What happened. An order change (order.*) is followed by its pet’s pet.updated, committed together.',
    enum: EVENT_TYPES,
    enumName: 'PetEventType',
  })
  type: EventType;

  @ApiProperty({
    description: 'When the change was made: RFC 3339, UTC, with milliseconds.',
    type: 'string',
    format: 'date-time',
    example: '2026-11-25T18:04:05.123Z',
  })
  timestamp: string;

  @ApiProperty({ type: () => PetEventDataDto })
  data: PetEventDataDto;
}
