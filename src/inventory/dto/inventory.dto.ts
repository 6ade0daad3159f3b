import { ApiProperty, ApiSchema } from '@nestjs/swagger';

const count = (description: string) =>
  ({ description, type: 'integer', format: 'int64', minimum: 0, example: 0 }) as const;

@ApiSchema({
  name: 'Inventory',
  description:
    'How many animals there are by status, in the store or in one category: exactly what listing every animal gives.',
})
export class InventoryDto {
  @ApiProperty({ ...count('Animals with status `available`.'), example: 12 })
  available: number;

  @ApiProperty({ ...count('Animals with status `pending`.'), example: 3 })
  pending: number;

  @ApiProperty({ ...count('Animals with status `sold`.'), example: 40 })
  sold: number;

  @ApiProperty({ ...count('Animals without a status.'), example: 1 })
  unspecified: number;

  @ApiProperty({ ...count('All of them: the sum of the four.'), example: 56 })
  total: number;
}
