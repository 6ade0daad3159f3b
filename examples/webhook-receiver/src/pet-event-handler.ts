import type { StoreEvent } from './delivery-verifier.js';

/**
 * Where the store's events take effect: this example logs one line per event. Keep it quick (the
 * store waits at most WEBHOOK_TIMEOUT_MS, 15 s by default, for the answer) and apply state by the
 * event's `data.pet` (or `data.category`), not by arrival order: a retried delivery can arrive
 * after later events.
 */
export function handlePetEvent({ id, type, data }: StoreEvent): void {
  // JSON keeps the line one line whatever a name holds.
  const previous = data.previous === undefined ? '' : ` previous=${JSON.stringify(data.previous)}`;
  const subject =
    'pet' in data ? `pet=${JSON.stringify(data.pet)}` : `category=${JSON.stringify(data.category)}`;
  console.log(`handled ${id} ${type} ${subject}${previous}`);
}
