import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateBy } from 'class-validator';
import { expecting } from '../../http/field-messages.js';
import { PageLimit } from '../../http/page-limit.js';
import { positionOf } from '../event-position.js';

const AFTER = expecting('after', 'the id of an event from this feed', 'query');

export class ListEventsQueryDto {
  @ApiPropertyOptional({
    description:
      'An event id: the page starts right after it. Follow the `Link: <…>; rel="next"` header ' +
      'rather than building it; without it, the feed starts at the oldest event kept.',
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

  @PageLimit('Maximum number of events returned.')
  limit?: number;
}
