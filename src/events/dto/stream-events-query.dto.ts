import { AfterEventId } from './event-cursor.js';

export class StreamEventsQueryDto {
  @AfterEventId(
    'An event id: the stream starts right after it. For clients that cannot send ' +
      '`Last-Event-ID`; that header wins when both are sent. Without either, the stream sends ' +
      'the events committed from now on.',
  )
  after?: string;
}
