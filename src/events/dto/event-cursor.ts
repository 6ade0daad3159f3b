import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateBy } from 'class-validator';
import { expecting } from '../../http/field-messages.js';
import { positionOf } from '../event-position.js';

const AFTER = expecting('after', 'the id of an event from this feed', 'query');

/** The `after` query parameter: an event id the reading starts right after. */
export const AfterEventId = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ description, example: '7301-42' }),
    IsOptional(),
    ValidateBy(
      {
        name: 'isEventId',
        validator: { validate: (v) => typeof v === 'string' && positionOf(v) !== undefined },
      },
      AFTER,
    ),
  );
