/** The kinds of event about a pet (docs/events.md, "Events"). */
export const PET_EVENT_TYPES = ['pet.created', 'pet.updated', 'pet.deleted'] as const;

/** The kinds of event about a category's name (docs/api-design.md, "The catalogue"). */
export const CATEGORY_EVENT_TYPES = ['category.updated', 'category.deleted'] as const;

/** The kinds of event about an order (docs/api-design.md, "Orders"). */
export const ORDER_EVENT_TYPES = [
  'order.created',
  'order.completed',
  'order.cancelled',
  'order.expired',
] as const;

/** Every kind of event, in the order webhook filters list them. */
export const EVENT_TYPES = [
  ...PET_EVENT_TYPES,
  ...CATEGORY_EVENT_TYPES,
  ...ORDER_EVENT_TYPES,
] as const;

export type PetEventType = (typeof PET_EVENT_TYPES)[number];
export type CategoryEventType = (typeof CATEGORY_EVENT_TYPES)[number];
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The member of an event's `data` that holds what changed, named by the type's first part:
 * `pet` for pet.updated, `category` for category.deleted, `order` for order.created.
 */
export function subjectOf(type: EventType): string {
  return type.slice(0, type.indexOf('.'));
}

/** A pet's members as events carry them, the Pet of the API; a null status is left out. */
export interface EventPet {
  id: number;
  name: string;
  categoryId: number;
  status: string | null;
}

/**
 * What a change records next to the pet it leaves: when, the trace of the request that made it
 * (a W3C traceparent, when one is known), and for pet.updated exactly the changed members' old
 * values, a status the pet did not have as `null`.
 */
export interface PetEventRecord {
  occurredAt: Date;
  traceContext: string | null;
  previous?: Record<string, unknown>;
}
