import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The time rules that depend on a date read (the getPet sunset, docs/api-design.md,
 * "Deprecation"), and the pauses that pace background work. A provider, so tests replace it to
 * stand on either side of a date, or to pace work on a time of their own, instead of moving the
 * machine's clock (test/support/test-app.ts).
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  /** Milliseconds on a clock that only moves forward (`performance.now()`): for pacing. */
  elapsedMs(): number {
    return performance.now();
  }

  /** Waits until `elapsedMs()` reaches `at`, or `signal` aborts; never rejects. */
  async waitUntil(at: number, signal: AbortSignal): Promise<void> {
    // A timer counts from the event loop's cached time, so it can end early: wait out the rest.
    for (let rest = at - this.elapsedMs(); rest > 0 && !signal.aborted;) {
      await sleep(rest, undefined, { signal }).catch(() => {});
      rest = at - this.elapsedMs();
    }
  }
}
