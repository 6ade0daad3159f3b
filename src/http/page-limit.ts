import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { decimalInteger, expecting } from './field-messages.js';

/** Every paged operation's `limit` (docs/api-design.md, "Paging"). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const LIMIT = expecting('limit', `a decimal integer from 1 to ${MAX_PAGE_SIZE}`, 'query');

/** The `limit` query parameter: a canonical decimal from 1 to MAX_PAGE_SIZE, optional. */
export const PageLimit = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      description,
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      example: DEFAULT_PAGE_SIZE,
    }),
    IsOptional(),
    Transform(decimalInteger),
    IsInt(LIMIT),
    Min(1, LIMIT),
    Max(MAX_PAGE_SIZE, LIMIT),
  );
