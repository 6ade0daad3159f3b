import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateBy } from 'class-validator';
import { expecting } from '../../http/field-messages.js';
import { positionOf } from '../event-position.js';

const AFTER = expecting('after', 'the id of an event from this feed', 'query');

export class StreamEventsQueryDto {
  @ApiPropertyOptional({
    description:
      'An event id: the stream starts right after it. For clients that cannot send ' +
      '`Last-Event-ID`; that header wins when both are sent. Without either, the stream sends ' +
      'the events committed from now on.',
    example: '7301-42',
  })
  @IsOptional()
  @ValidateBy(
    {
      name: 'isEventId',
      validator: { validate: (v) => typeof v === 'string' && positionOf(v) !== undefined },
    },
    AFTER,
  )
  after?: string;
}
