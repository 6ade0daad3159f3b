import { CategoryIdFilter } from '../../http/category-id-filter.js';

export class InventoryQueryDto {
  @CategoryIdFilter('Counts only the animals of that category.')
  categoryId?: number;
}
