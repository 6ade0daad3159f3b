import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { decimalInteger, expecting } from '../../http/field-messages.js';
import { PageCursor } from '../../http/page-cursor.js';
import { PageLimit } from '../../http/page-limit.js';
import { ONE_OF_ORDER_STATUSES, ORDER_STATUSES, type OrderStatus } from '../order-status.js';
import { ORDER_ID_SCHEMA } from './order-properties.js';

const STATUS = expecting('status', ONE_OF_ORDER_STATUSES, 'query');
const PET_ID = expecting('petId', `a decimal integer from 1 to ${MAX_ID}`, 'query');

export class ListOrdersQueryDto {
  @PageLimit('Maximum number of orders returned.')
  limit?: number;

  @ApiPropertyOptional({
    description: 'Restricts results to orders in that state.',
    enum: [...ORDER_STATUSES],
    enumName: 'OrderStatus',
  })
  @IsOptional()
  @IsIn(ORDER_STATUSES, STATUS)
  status?: OrderStatus;

  @ApiPropertyOptional({
    description:
      'Restricts results to the orders of that animal (with `status`, to those that match both).',
    ...ORDER_ID_SCHEMA,
  })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt(PET_ID)
  @Min(1, PET_ID)
  @Max(MAX_ID, PET_ID)
  petId?: number;

  /** The id of the last row of the previous page, decoded from the opaque cursor. */
  @PageCursor()
  cursor?: number;
}
