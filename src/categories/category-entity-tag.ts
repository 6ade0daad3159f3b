/**
 * A category's strong ETag: its id and revision. Deleting a category clears its name but keeps
 * counting its revision, so a tag read before the deletion never matches the category named again
 * (docs/api-design.md, "The catalogue").
 */
export function categoryEntityTag(id: number, revision: number): string {
  return `"${id}-${revision}"`;
}
