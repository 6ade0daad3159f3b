import { eventIdOf } from './event-position.js';
import type { StoredPetEvent } from './pet-events.repository.js';

/** The wire form of an event: stored JSON pieces put together, in the documented key order. */
export function eventJson(event: StoredPetEvent): string {
  const previous = event.previous === null ? '' : `,"previous":${event.previous}`;
  return (
    `{"id":"${eventIdOf(event)}","type":"${event.type}",` +
    `"timestamp":"${event.occurredAt.toISOString()}","data":{"pet":${event.pet}${previous}}}`
  );
}
