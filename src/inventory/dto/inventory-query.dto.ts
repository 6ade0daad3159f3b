import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { decimalInteger, expecting } from '../../http/field-messages.js';

const CATEGORY_ID = expecting('categoryId', `a decimal integer from 1 to ${MAX_ID}`, 'query');

export class InventoryQueryDto {
  @ApiPropertyOptional({
    description: 'Counts only the animals of that category.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
  })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt(CATEGORY_ID)
  @Min(1, CATEGORY_ID)
  @Max(MAX_ID, CATEGORY_ID)
  categoryId?: number;
}
