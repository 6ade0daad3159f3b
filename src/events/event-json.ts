import { eventIdOf } from './event-position.js';
import { type EventPet, subjectOf } from './pet-event.js';
import type { StoredPetEvent } from './pet-events.repository.js';

/**
 * The wire form of an event: stored JSON pieces put together, in the documented key order. The
 * `pet` column holds what changed, a pet, a category or an order, and the type says which.
 */
export function eventJson(event: StoredPetEvent): string {
  const previous = event.previous === null ? '' : `,"previous":${event.previous}`;
  const subject = `"${subjectOf(event.type)}":${event.pet}`;
  return (
    `{"id":"${eventIdOf(event)}","type":"${event.type}",` +
    `"timestamp":"${event.occurredAt.toISOString()}","data":{${subject}${previous}}}`
  );
}

/**
 * A pet's JSON is `PET_JSON_BEFORE_ID`, its id, then `petJsonAfterId`: split so that the
 * statement inserting a pet can put in the id the database gives it (pets.repository.ts).
 */
export const PET_JSON_BEFORE_ID = '{"id":';

export function petJsonAfterId({ name, categoryId, status }: Omit<EventPet, 'id'>): string {
  const members = status === null ? { name, categoryId } : { name, categoryId, status };
  return `,${JSON.stringify(members).slice(1)}`;
}

export function petJson(pet: EventPet): string {
  return `${PET_JSON_BEFORE_ID}${pet.id}${petJsonAfterId(pet)}`;
}
