import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { decimalInteger, expecting, MAX_ID } from './field-rules.js';

const PET_ID = expecting('petId', `a decimal integer from 1 to ${MAX_ID}`, 'path');

export class PetParamsDto {
  @ApiProperty({
    description: 'The identifier of the animal.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: MAX_ID,
    example: 42,
  })
  @Transform(decimalInteger)
  @IsInt(PET_ID)
  @Min(1, PET_ID)
  @Max(MAX_ID, PET_ID)
  petId: number;
}
