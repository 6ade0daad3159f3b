import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { expecting } from '../../http/field-messages.js';
import { MAX_HOLD_SECONDS, MIN_HOLD_SECONDS, ORDER_PROPERTIES } from './order-properties.js';

const PET_ID = expecting('petId', `a JSON integer from 1 to ${MAX_ID}`);
const HOLD_SECONDS = expecting(
  'holdSeconds',
  `a JSON integer from ${MIN_HOLD_SECONDS} to ${MAX_HOLD_SECONDS} (or absent)`,
);

@ApiSchema({ name: 'NewOrder', description: 'An animal to hold for a buyer, and for how long.' })
export class NewOrderDto {
  @ApiProperty({
    ...ORDER_PROPERTIES.petId,
    description: 'The animal to hold: it must be `available`.',
  })
  @IsInt(PET_ID)
  @Min(1, PET_ID)
  @Max(MAX_ID, PET_ID)
  petId: number;

  @ApiPropertyOptional({
    description:
      'How long the animal is held, in seconds; by default the store’s `ORDER_HOLD_SECONDS` (900 unless configured).',
    type: 'integer',
    minimum: MIN_HOLD_SECONDS,
    maximum: MAX_HOLD_SECONDS,
    example: 900,
  })
  // Absent is allowed, null is not: @IsOptional would let null through.
  @ValidateIf((_order, value) => value !== undefined)
  @IsInt(HOLD_SECONDS)
  @Min(MIN_HOLD_SECONDS, HOLD_SECONDS)
  @Max(MAX_HOLD_SECONDS, HOLD_SECONDS)
  holdSeconds?: number;
}
