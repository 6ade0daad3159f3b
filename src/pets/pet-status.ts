/** Availability status of a pet: the `PetStatus` enum of the OpenAPI document. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

export type PetStatus = (typeof PET_STATUSES)[number];

/** A status in the OpenAPI document: the one named `PetStatus` enum wherever it is used. */
export const PET_STATUS_SCHEMA = { enum: PET_STATUSES, enumName: 'PetStatus' } as const;

/** What a status must be, as validation messages say it. */
export const ONE_OF_PET_STATUSES = `one of ${PET_STATUSES.join(', ')}`;
