import { Counter, type Registry } from 'prom-client';

/**
 * A prom-client Counter with two labels, bumped on the request path: increments are added up in
 * maps and handed to the counter at each scrape (its `collect`), where `inc` would build the
 * series key from the labels on every call (docs/performance.md, "Metrics on the request path").
 */
export class DeferredCounter<A extends string, B extends string> {
  private readonly pending = new Map<string, Map<string, number>>();

  constructor(name: string, help: string, [first, second]: [A, B], registry: Registry) {
    const { pending } = this;
    new Counter<A | B>({
      name,
      help,
      labelNames: [first, second],
      registers: [registry],
      collect() {
        for (const [firstValue, counts] of pending)
          for (const [secondValue, count] of counts) {
            if (count === 0) continue;
            this.inc(
              { [first]: firstValue, [second]: secondValue } as Record<A | B, string>,
              count,
            );
            counts.set(secondValue, 0);
          }
      },
    });
  }

  inc(firstValue: string, secondValue: string): void {
    let counts = this.pending.get(firstValue);
    if (counts === undefined) this.pending.set(firstValue, (counts = new Map<string, number>()));
    counts.set(secondValue, (counts.get(secondValue) ?? 0) + 1);
  }
}
