import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { expecting } from '../../http/field-messages.js';
import { IsName, NAME_MAX_LENGTH } from '../../http/name-rules.js';
import { CATEGORY_PROPERTIES } from './category-properties.js';

const NAME = expecting(
  'name',
  `a string of 1 to ${NAME_MAX_LENGTH} characters, not only whitespace, without U+0000`,
);

@ApiSchema({ name: 'CategoryName', description: 'The name to give a category id.' })
export class CategoryNameDto {
  @ApiProperty(CATEGORY_PROPERTIES.name)
  @IsName(NAME)
  name: string;
}
