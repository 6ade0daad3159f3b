import { PageCursor } from '../../http/page-cursor.js';
import { PageLimit } from '../../http/page-limit.js';

export class ListCategoriesQueryDto {
  @PageLimit('Maximum number of categories returned.')
  limit?: number;

  /** The id of the last row of the previous page, decoded from the opaque cursor. */
  @PageCursor()
  cursor?: number;
}
