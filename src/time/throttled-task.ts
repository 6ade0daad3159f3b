/**
 * Runs an asynchronous task at most once per `intervalMs` and never twice at once. A request that
 * comes while a run is under way, or sooner than `intervalMs` after it started, is folded into one
 * more run as soon as that is allowed: a burst of requests costs two runs, not one each. The task
 * must not reject; it handles its own failures.
 */
export class ThrottledTask {
  private running?: Promise<void>;
  private requestedAgain = false;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  /** Runs the task now, or once more as soon as it may. */
  request(): void {
    if (this.running) {
      this.requestedAgain = true;
      return;
    }
    const startedAt = Date.now();
    this.running = this.task().finally(() => {
      const wait = Math.max(0, startedAt + this.intervalMs - Date.now());
      setTimeout(() => {
        this.running = undefined;
        if (!this.requestedAgain) return;
        this.requestedAgain = false;
        this.request();
      }, wait).unref();
    });
  }

  /** Settles when the run under way, if any, has; later runs are not waited for. */
  async settled(): Promise<void> {
    await this.running;
  }
}
