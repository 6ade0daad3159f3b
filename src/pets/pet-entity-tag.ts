/**
 * A pet's strong ETag: its id and revision, which every change increments, so the tag changes
 * whenever the pet does and never returns to an earlier value (docs/api-design.md, "The pet
 * lifecycle"). The id keeps one pet's tag from ever matching another pet's.
 */
export function petEntityTag(id: number, revision: number): string {
  return `"${id}-${revision}"`;
}
