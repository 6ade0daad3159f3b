import { pino, type DestinationStream } from 'pino';

/**
 * Where the log goes: stdout, all the lines of one event-loop turn in one synchronous write as the
 * turn ends. One write a turn, not a line, saves a system call a request; synchronous, because
 * pino's asynchronous destination hands each write to libuv's thread pool, which costs more than
 * the write (docs/performance.md, "The request log"). A log reader that stops reading holds the
 * service up rather than letting unwritten lines pile up in memory, as pino's own default does.
 */
export class BatchedStdout implements DestinationStream {
  private lines: string[] = [];
  private writeScheduled = false;

  /** @param out pino's synchronous stdout; a stand-in in unit tests */
  constructor(private readonly out: DestinationStream = pino.destination({ sync: true })) {}

  write(line: string): void {
    this.lines.push(line);
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    setImmediate(this.writeHeldLines);
  }

  /** Writes the lines held now: pino calls it after a fatal line, `main.ts` as the process exits. */
  flushSync(): void {
    this.writeHeldLines();
  }

  /** pino's `logger.flush(callback)`: the same, then the callback. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  private readonly writeHeldLines = (): void => {
    this.writeScheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.out.write(text);
  };
}
