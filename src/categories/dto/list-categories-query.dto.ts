import { PageCursor } from '../../http/page-cursor.js';
import { PageLimit } from '../../http/page-limit.js';

export class ListCategoriesQueryDto {
  @PageLimit('Maximum number of categories returned.')
  limit?: number;

  @PageCursor()
  cursor?: string;
}
