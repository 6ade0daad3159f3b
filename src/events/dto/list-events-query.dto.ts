import { PageLimit } from '../../http/page-limit.js';
import { AfterEventId } from './event-cursor.js';

export class ListEventsQueryDto {
  @AfterEventId(
    'An event id: the page starts right after it. Follow the `Link: <…>; rel="next"` header ' +
      'rather than building it; without it, the feed starts at the oldest event kept.',
  )
  after?: string;

  @PageLimit('Maximum number of events returned.')
  limit?: number;
}
