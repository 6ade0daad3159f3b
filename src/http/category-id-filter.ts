import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_ID } from './canonical-decimal.js';
import { decimalInteger, expecting } from './field-messages.js';

const CATEGORY_ID = expecting('categoryId', `a decimal integer from 1 to ${MAX_ID}`, 'query');

/** The `categoryId` query filter (listPets, getInventory): a canonical decimal id, optional. */
export const CategoryIdFilter = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      description,
      type: 'integer',
      format: 'int64',
      minimum: 1,
      maximum: MAX_ID,
    }),
    IsOptional(),
    Transform(decimalInteger),
    IsInt(CATEGORY_ID),
    Min(1, CATEGORY_ID),
    Max(MAX_ID, CATEGORY_ID),
  );
