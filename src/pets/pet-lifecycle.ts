import { ApiError } from '../errors/api-error.js';
import { PET_STATUSES, type PetStatus } from './pet-status.js';

/** A pet's status as the lifecycle sees it: `null` for a pet added without one. */
type CurrentStatus = PetStatus | null;

/**
 * Which statuses a pet may move to from each (docs/api-design.md, "The pet lifecycle"). The one
 * definition: the check, the 409 message and the OpenAPI description are all read from it.
 * Naming the status a pet already has is never a transition, and a sold pet stays sold.
 */
export const STATUS_TRANSITIONS: ReadonlyMap<CurrentStatus, readonly PetStatus[]> = new Map<
  CurrentStatus,
  readonly PetStatus[]
>([
  [null, ['available', 'pending', 'sold']],
  ['available', ['pending', 'sold']],
  ['pending', ['available', 'sold']],
  ['sold', []],
]);

export function canTransition(from: CurrentStatus, to: PetStatus): boolean {
  return STATUS_TRANSITIONS.get(from)!.includes(to);
}

/** The 409 for a status change the table does not allow: what the pet is and what it may become. */
export function invalidTransition(petId: number, from: CurrentStatus, to: PetStatus): ApiError {
  return new ApiError('INVALID_TRANSITION', invalidTransitionMessage(petId, from, to));
}

export function invalidTransitionMessage(
  petId: number,
  from: CurrentStatus,
  to: PetStatus,
): string {
  const allowed = STATUS_TRANSITIONS.get(from)!;
  const now = `Pet ${petId} is ${from ?? 'without a status'}`;
  if (allowed.length === 0) return `${now}: its status can no longer change (asked for ${to})`;
  return `${now}: its status can change to ${orList(allowed)}, not to ${to}`;
}

/** The table as Markdown, for the OpenAPI description of updatePet. */
export function describeTransitions(): string {
  const header = `| from \\ to | ${PET_STATUSES.join(' | ')} |`;
  const rule = `|---|${PET_STATUSES.map(() => '---').join('|')}|`;
  const rows = [...STATUS_TRANSITIONS].map(
    ([from, targets]) =>
      `| ${from ?? '(none)'} | ${PET_STATUSES.map((to) => (targets.includes(to) ? 'yes' : '–')).join(' | ')} |`,
  );
  return [header, rule, ...rows].join('\n');
}

function orList(items: readonly string[]): string {
  return items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
