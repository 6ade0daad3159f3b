import type { PetEvent } from './delivery-verifier.js';

/**
 * Where the store's events take effect: this example logs one line per event. Keep it quick (the
 * store waits at most WEBHOOK_TIMEOUT_MS, 15 s by default, for the answer) and apply state by the
 * event's `data.pet`, not by arrival order: a retried delivery can arrive after later events.
 */
export function handlePetEvent({ id, type, data }: PetEvent): void {
  // JSON keeps the line one line whatever a pet's name holds.
  const previous = data.previous === undefined ? '' : ` previous=${JSON.stringify(data.previous)}`;
  console.log(`handled ${id} ${type} pet=${JSON.stringify(data.pet)}${previous}`);
}
