/**
 * Gathers the items added during one turn of the event loop and runs them together once that
 * turn's callbacks have run (docs/architecture.md, "PostgreSQL"): under load one statement does
 * the work of many requests; alone, an item waits only for the end of its turn. The items of a
 * batch succeed or fail together.
 */
export class TurnBatch<I, O> {
  private open?: Batch<I, O>;

  /** `run` takes a turn's items and resolves with one result per item, in their order. */
  constructor(private readonly run: (items: I[]) => Promise<O[]>) {}

  add(item: I): Promise<O> {
    const batch = this.open ?? this.opened();
    batch.items.push(item);
    return new Promise((resolve, reject) => batch.callers.push({ resolve, reject }));
  }

  private opened(): Batch<I, O> {
    const batch: Batch<I, O> = { items: [], callers: [] };
    this.open = batch;
    setImmediate(() => {
      this.open = undefined;
      this.run(batch.items).then(
        (results) => batch.callers.forEach((caller, i) => caller.resolve(results[i])),
        (error: unknown) => batch.callers.forEach((caller) => caller.reject(error)),
      );
    });
    return batch;
  }
}

interface Batch<I, O> {
  items: I[];
  callers: { resolve(result: O): void; reject(reason: unknown): void }[];
}
