import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PET_EVENT_TYPES, type PetEventType } from '../pet-event.js';

/** The Pet and PetChange schemas, which the pets feature documents. */
const PET_SCHEMA = '#/components/schemas/Pet';
const PET_CHANGE_SCHEMA = '#/components/schemas/PetChange';

@ApiSchema({ name: 'PetEventData', description: 'What changed.' })
export class PetEventDataDto {
  @ApiProperty({ description: 'The pet after the change.', allOf: [{ $ref: PET_SCHEMA }] })
  pet: object;

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

  @ApiProperty({ description: 'What happened.', enum: PET_EVENT_TYPES, enumName: 'PetEventType' })
  type: PetEventType;

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
