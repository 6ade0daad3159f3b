/**
 * The ids of the last `capacity` deliveries handled, the oldest forgotten first: enough to drop
 * the repeats an example sees. It lives in memory, so a restart forgets it, and a retry can come a
 * day later. A real receiver records each processed `webhook-id` in its own database, in the same
 * transaction as the change the event causes (a unique key on the id), so that a crash can neither
 * lose the effect nor apply it twice.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    // A Set iterates in insertion order: the first value is the oldest id.
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value!);
  }
}
