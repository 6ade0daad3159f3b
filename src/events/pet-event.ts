/** The kinds of event (docs/events.md, "Events"). */
export const PET_EVENT_TYPES = ['pet.created', 'pet.updated'] as const;

export type PetEventType = (typeof PET_EVENT_TYPES)[number];

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
