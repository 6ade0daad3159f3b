/**
 * Whether an open order holds a pet: `held` (its status cannot change, it cannot be deleted),
 * `free`, or `released` when a hold whose deadline had passed was expired just now, in its own
 * transaction, so the pet changed and must be read again.
 */
export type PetHold = 'held' | 'free' | 'released';
