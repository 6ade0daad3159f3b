import { setImmediate } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyPrincipal } from '../../../src/auth/principal.js';
import { loadConfig } from '../../../src/config/app-config.js';
import type { EventPosition } from '../../../src/events/event-position.js';
import { EventStreams, type StreamSink } from '../../../src/events/event-streams.js';
import type { StoredPetEvent } from '../../../src/events/pet-events.repository.js';

const KEY = { id: 1, scopes: ['pets:read'], expiresAt: null } as unknown as ApiKeyPrincipal;
/** Calls to findPage past which a catch-up is spinning: the fake fails, so the test ends. */
const SPINNING = 50;

function event(tx: bigint, seq: bigint): StoredPetEvent {
  return {
    tx,
    seq,
    type: 'pet.created',
    occurredAt: new Date(),
    pet: `{"id":${seq},"name":"p","categoryId":1}`,
    previous: null,
    traceContext: null,
  };
}

/** The events of SQLite, whose SQL reads positions by seq alone, from `first` to `last`. */
function bySeq(first: bigint, last: bigint) {
  return (after: EventPosition, limit: number): StoredPetEvent[] => {
    const page: StoredPetEvent[] = [];
    for (let seq = (after.seq < first ? first - 1n : after.seq) + 1n; seq <= last; seq++) {
      if (page.length === limit) break;
      page.push(event(0n, seq));
    }
    return page;
  };
}

/** A client's end of a stream: what was written, and as much buffered as the test says. */
class FakeSink implements StreamSink {
  written = '';
  buffered = 0;
  closed = false;
  ended = false;
  aborted = false;
  private drainers: (() => void)[] = [];

  write(chunk: string): void {
    this.written += chunk;
  }
  drain(): Promise<void> {
    return new Promise((resolve) => this.drainers.push(resolve));
  }
  /** The client takes everything buffered. */
  takeAll(): void {
    this.buffered = 0;
    for (const drained of this.drainers.splice(0)) drained();
  }
  end(): void {
    this.ended = true;
  }
  abort(): void {
    this.aborted = true;
  }
  ids(): string[] {
    return [...this.written.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
  }
}

const opened: EventStreams[] = [];
afterEach(() => {
  for (const streams of opened.splice(0)) streams.beforeApplicationShutdown();
  vi.useRealTimers();
});

/** EventStreams over a fake repository whose reads settle at once, as SQLite's do. */
function streamsOver(
  newest: EventPosition,
  page: (after: EventPosition, limit: number) => StoredPetEvent[],
) {
  const reads: EventPosition[] = [];
  const repository = {
    onCommitted: () => {},
    findNewestPosition: () => Promise.resolve(newest),
    findPage: (after: EventPosition, limit: number) => {
      reads.push(after);
      if (reads.length > SPINNING) return Promise.reject(new Error('spinning'));
      return Promise.resolve(page(after, limit));
    },
  };
  const streams = new EventStreams(
    repository as never,
    { listen: () => {} } as never,
    loadConfig({}),
    { recheck: () => Promise.resolve(new Map([[KEY.id, KEY]])) } as never,
  );
  opened.push(streams);
  return { streams, reads };
}

/** Lets every read, write and wait that can happen now happen. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await setImmediate();
}

describe('EventStreams catch-up', () => {
  it('does not spin on pages that do not move its cursor', async () => {
    // A position whose tx SQLite's SQL ignores: every page is the same events, all before it.
    const { streams, reads } = streamsOver({ tx: 0n, seq: 500n }, bySeq(1n, 500n));
    const sink = new FakeSink();
    streams.open(KEY, { tx: 1n, seq: 1n }, sink);
    await settle();
    expect(reads.length).toBeLessThanOrEqual(2);
    expect(sink.ended).toBe(false);
    expect(sink.ids()).toEqual([]);
  });

  it('sends everything after the position it opened at, though newer events were committed since', async () => {
    // The client committed events 4 and 5 between the position's read and the stream's open.
    const { streams } = streamsOver({ tx: 0n, seq: 5n }, bySeq(1n, 5n));
    const sink = new FakeSink();
    streams.open(KEY, { tx: 0n, seq: 3n }, sink);
    await settle();
    expect(sink.ids()).toEqual(['0-4', '0-5']);
  });

  it('yields to the event loop between pages', async () => {
    const { streams, reads } = streamsOver({ tx: 0n, seq: 450n }, bySeq(1n, 450n));
    const sink = new FakeSink();
    streams.open(KEY, { tx: 0n, seq: 0n }, sink);
    const readsByTheNextTurn = await new Promise((resolve) =>
      global.setImmediate(() => resolve(reads.length)),
    );
    expect(readsByTheNextTurn).toBe(1);
    await settle();
    expect(sink.ids()).toHaveLength(450);
  });

  it('reads again after a page that saw less than the fan-out had, once the fan-out has run', async () => {
    // The tail is at 500, but this read (a lagging read node) sees nothing after 5 yet.
    let visible = 5n;
    const { streams, reads } = streamsOver({ tx: 0n, seq: 500n }, (after, limit) =>
      bySeq(1n, visible)(after, limit),
    );
    const sink = new FakeSink();
    streams.open(KEY, { tx: 0n, seq: 5n }, sink);
    await settle();
    expect(reads).toHaveLength(1);

    visible = 501n;
    streams.wake();
    await settle();
    expect(sink.ids()).toEqual(Array.from({ length: 496 }, (_, i) => `0-${i + 6}`));
  });

  it('waits for a slow client to take what it has before reading the next page, and cuts it only when it stops', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { streams, reads } = streamsOver({ tx: 0n, seq: 300n }, bySeq(1n, 300n));
    const sink = new FakeSink();
    // Far more than a megabyte waits for this client.
    sink.write = function (chunk) {
      this.written += chunk;
      this.buffered += 2 * 1024 * 1024;
    };
    streams.open(KEY, { tx: 0n, seq: 0n }, sink);
    await settle();
    expect(reads).toHaveLength(1);
    expect([sink.aborted, sink.ended]).toEqual([false, false]);

    sink.takeAll();
    await settle();
    expect(reads).toHaveLength(2);
    expect(sink.ids()).toHaveLength(200);

    vi.advanceTimersByTime(29_000);
    await settle();
    expect(sink.aborted).toBe(false);
    vi.advanceTimersByTime(1_000);
    await settle();
    expect([sink.aborted, sink.ended]).toEqual([true, false]);
    expect(sink.ids()).toHaveLength(200);
  });

  it('counts no stream whose client is already gone', () => {
    const { streams } = streamsOver({ tx: 0n, seq: 0n }, () => []);
    const gone = new FakeSink();
    gone.closed = true;
    for (let i = 0; i < 10; i++)
      expect(streams.open(KEY, { tx: 0n, seq: 0n }, gone)).toBeUndefined();
    expect(gone.written).toBe('');
    for (let i = 0; i < 5; i++)
      expect(streams.open(KEY, { tx: 0n, seq: 0n }, new FakeSink())).toBeDefined();
  });
});
