/** The kinds of event (docs/events.md, "Events"). */
export const PET_EVENT_TYPES = ['pet.created', 'pet.updated'] as const;

export type PetEventType = (typeof PET_EVENT_TYPES)[number];

/** A Pet as the API sends it: the event carries the pet after the change. */
export interface EventPet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

/**
 * A change to record. `previous` (pet.updated only) holds exactly the changed members' old
 * values, a status the pet did not have as `null`.
 */
export interface NewPetEvent {
  type: PetEventType;
  occurredAt: Date;
  pet: EventPet;
  previous?: Record<string, unknown>;
}
