import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CATEGORY_PROPERTIES } from './category-properties.js';

@ApiSchema({
  name: 'Category',
  description: "A name for a category id: what a shop front shows for the pets' `categoryId`.",
})
export class CategoryDto {
  @ApiProperty(CATEGORY_PROPERTIES.id)
  id: number;

  @ApiProperty(CATEGORY_PROPERTIES.name)
  name: string;
}
