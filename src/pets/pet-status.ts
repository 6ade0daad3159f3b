/** Availability status of a pet: the `PetStatus` enum of the OpenAPI document. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

export type PetStatus = (typeof PET_STATUSES)[number];
