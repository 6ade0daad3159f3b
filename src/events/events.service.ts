import { Injectable, Optional } from '@nestjs/common';
import { ApiError, validationFailed } from '../errors/api-error.js';
import { DEFAULT_PAGE_SIZE } from '../http/page-limit.js';
import type { ListEventsQueryDto } from './dto/list-events-query.dto.js';
import { eventJson } from './event-json.js';
import { eventIdOf, type EventPosition, isBefore, positionOf, START } from './event-position.js';
import { PetEventsRepository } from './pet-events.repository.js';
import { Metrics } from '../metrics/metrics.js';
import { linkCurrentSpanTo } from '../telemetry/tracing.js';

export interface EventPage {
  /** The page as a JSON array, built from the stored JSON without parsing it. */
  json: string;
  /** Query parameters of the next page: after the last event served, or the same position. */
  next: Record<string, string>;
}

export const CURSOR_EXPIRED_MESSAGE =
  'Events after this cursor were deleted (older than the retention period); read the feed again without after';

@Injectable()
export class EventsService {
  constructor(
    private readonly events: PetEventsRepository,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** A 410 for a position before what retention deleted: events after it may be gone. */
  async assertRetained(position: EventPosition): Promise<void> {
    if (isBefore(position, await this.events.findPurgedThrough())) {
      throw new ApiError('CURSOR_EXPIRED', CURSOR_EXPIRED_MESSAGE);
    }
  }

  /**
   * The position an event id names, or a 400 naming `field`: for an id of another form, and for
   * one whose parts this engine never issues, which its SQL and the comparisons in memory would
   * read differently (docs/events.md, "The stream").
   */
  private servedPosition(id: string, field: string): EventPosition {
    const position = positionOf(id);
    if (position === undefined || !this.events.issues(position))
      throw validationFailed(`${field} must be the id of an event from this feed`);
    return position;
  }

  /**
   * Where a stream resumes: right after `Last-Event-ID`, else after `after`, else after the newest
   * event now. "Now" is read before the response starts, so a change the client commits once it
   * has the stream's headers is always after it. A 400 for an id this feed never served, a 410 for
   * one older than retention.
   */
  async resumePosition(
    lastEventId: string | undefined,
    after: string | undefined,
  ): Promise<EventPosition> {
    const from =
      lastEventId !== undefined
        ? this.servedPosition(lastEventId, 'Last-Event-ID')
        : after !== undefined
          ? this.servedPosition(after, 'after')
          : undefined;
    if (from === undefined) return this.events.findNewestPosition();
    await this.assertRetained(from);
    return from;
  }

  /**
   * A page of the feed (docs/events.md, "The feed"). The retention check runs after the page is
   * read: had retention deleted events after the cursor in between, the page would lack them, and
   * the check sees that deletion.
   */
  async page({ after, limit = DEFAULT_PAGE_SIZE }: ListEventsQueryDto): Promise<EventPage> {
    const from = after === undefined ? START : this.servedPosition(after, 'after');
    const events = await this.events.findPage(from, limit);
    if (after !== undefined) await this.assertRetained(from);
    linkCurrentSpanTo(events.map((event) => event.traceContext));
    const last = events.at(-1);
    if (last) this.metrics?.eventLag.observe({ reader: 'feed' }, ageSeconds(last.occurredAt));
    const position = last ? eventIdOf(last) : after;
    return {
      json: `[${events.map(eventJson).join(',')}]`,
      next: { ...(position !== undefined && { after: position }), limit: String(limit) },
    };
  }
}

/** How long ago an event was committed, as its lag when it is served. */
export function ageSeconds(occurredAt: Date): number {
  return Math.max(0, Date.now() - occurredAt.getTime()) / 1000;
}
