import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { setImmediate } from 'node:timers/promises';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics.js';
import { ageSeconds } from './events.service.js';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { ApiKeyVerifier } from '../auth/api-key-verifier.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import { lacksScope } from '../auth/require-scope.decorator.js';
import type { Scope } from '../auth/scopes.js';
import { ApiError, INVALID_API_KEY_MESSAGE, unauthorized } from '../errors/api-error.js';
import { eventIdOf, type EventPosition, isBefore } from './event-position.js';
import { eventJson } from './event-json.js';
import { PetEventsRepository, type StoredPetEvent } from './pet-events.repository.js';
import { inLinkedSpan } from '../telemetry/tracing.js';

/** The scope a stream needs when it opens and for as long as it stays open. */
export const STREAM_SCOPE: Scope = 'pets:read';

/**
 * The event a stream sends last when its key is no longer accepted: its data is the Error body a
 * request with the key now gets (docs/events.md, "When the key is revoked or expires").
 */
export const KEY_REFUSED_EVENT = 'key.refused';

/** Looks for new events this often even without a notification (one may be lost). */
const POLL_MS = 1_000;
/** A stream ends at most this long after its key's expiry: the expiry is known in memory. */
const EXPIRY_CHECK_MS = 1_000;
/**
 * How often the keys of the open streams are read from the database again, in one query: a
 * stream whose key is revoked, or loses the scope, ends within this long, as any request with the
 * key is refused within 5 s (docs/api-design.md, "API keys").
 */
const KEY_RECHECK_MS = 2_000;

/** Events read per query, when a stream catches up and when new ones are fanned out. */
const BATCH = 100;
/** The span of each batch written to streams, linked to the requests that made its events. */
const SEND_SPAN = 'send events';

/** A live client this far behind in reading is disconnected; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** A catching-up stream reads its next page only once its client has less than this to take. */
const CATCH_UP_HIGH_WATER_BYTES = 64 * 1024;
/** A catching-up client that takes nothing for this long has stopped reading: it is cut. */
const CATCH_UP_STALL_MS = 30_000;

/** Where an open stream writes: the response body. */
export interface StreamSink {
  write(chunk: string): void;
  /** Bytes written but not yet taken by the client. */
  readonly buffered: number;
  /** The client's connection has closed: nothing written reaches it any more. */
  readonly closed: boolean;
  /** Settles once the client has taken some of what is buffered, or is gone. */
  drain(): Promise<void>;
  /** Ends the response after what was written. */
  end(): void;
  /** Drops the connection and what it still buffers: for a client that stopped reading. */
  abort(): void;
}

interface OpenStream {
  keyId: number;
  /** When the stream's key expires, in ms since the epoch; Infinity: never. */
  keyExpiresAt: number;
  sink: StreamSink;
  /** The last event this stream was sent (or its start). */
  cursor: EventPosition;
  /** Caught up: new events reach it from the fan-out. */
  live: boolean;
  closed: boolean;
  /** Ends the catch-up's wait, when it waits: the stream closed. */
  stopWaiting?: () => void;
}

/**
 * The open Server-Sent Events streams of this instance (docs/events.md, "The stream"). Each stream
 * first catches up from its own position; then one reader per instance reads each new batch of
 * events once and writes it to every live stream. A commit wakes it (in this process directly,
 * from others by ChangeNotifications), and so does a timer, so a lost notification costs a
 * moment, never an event.
 */
@Injectable()
export class EventStreams implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('EventStreams');
  private readonly streams = new Set<OpenStream>();
  private readonly perKey = new Map<number, number>();
  /** The newest event the fan-out has written to the live streams; set when one first goes live. */
  private tail?: EventPosition;
  private fanningOut = false;
  private wokenAgain = false;
  private recheckingKeys = false;
  private timers: NodeJS.Timeout[] = [];
  /** Catch-ups waiting for the fan-out's next pass to end. */
  private passWaiters: (() => void)[] = [];

  constructor(
    private readonly events: PetEventsRepository,
    private readonly notifications: ChangeNotifications,
    private readonly config: AppConfig,
    private readonly keys: ApiKeyVerifier,
    @Optional() private readonly metrics?: Metrics,
  ) {
    if (!metrics) return;
    const streams = this.streams;
    new Gauge({
      name: 'animal_store_event_streams_open',
      help: 'Event streams (GET /v1/events/stream) open on this instance.',
      registers: [metrics.registry],
      collect() {
        this.set(streams.size);
      },
    });
  }

  onModuleInit(): void {
    this.events.onCommitted(() => this.wake());
    this.notifications.listen(() => this.wake());
  }

  /**
   * Opens a stream for the key the guard accepted, that sends every event after `after`. Refuses
   * with 429 past the key's limit on this instance. Opens nothing, and counts nothing, for a
   * client already gone (undefined): its close was heard before there was a stream to close. The
   * caller listens for the close in the same turn.
   */
  open(key: ApiKeyPrincipal, after: EventPosition, sink: StreamSink): OpenStream | undefined {
    if (sink.closed) return undefined;
    const keyId = key.id;
    const open = this.perKey.get(keyId) ?? 0;
    if (open >= this.config.eventStreamsPerKey) {
      throw new ApiError(
        'RATE_LIMITED',
        `This API key already has ${open} open event streams (the most allowed); close one first`,
        { 'Retry-After': '1' },
      );
    }
    this.perKey.set(keyId, open + 1);
    const stream: OpenStream = {
      keyId,
      keyExpiresAt: expiryOf(key),
      sink,
      cursor: after,
      live: false,
      closed: false,
    };
    this.streams.add(stream);
    this.startTimers();
    sink.write(': connected\n\n');
    void this.catchUp(stream);
    return stream;
  }

  /** Ends the stream; `abort` drops the connection of a client that stopped reading instead. */
  close(stream: OpenStream, abort = false): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.stopWaiting?.();
    this.streams.delete(stream);
    const open = this.perKey.get(stream.keyId)! - 1;
    if (open === 0) this.perKey.delete(stream.keyId);
    else this.perKey.set(stream.keyId, open);
    if (abort) stream.sink.abort();
    else stream.sink.end();
    if (this.streams.size === 0) this.stopTimers();
  }

  /** Ends every stream cleanly, so clients reconnect to another instance (SIGTERM). */
  beforeApplicationShutdown(): void {
    for (const stream of [...this.streams]) this.close(stream);
  }

  /** Looks for new events and writes them to the live streams; runs one pass at a time. */
  wake(): void {
    if (this.tail === undefined) return;
    if (this.fanningOut) {
      this.wokenAgain = true;
      return;
    }
    this.fanningOut = true;
    void this.fanOut().finally(() => {
      this.fanningOut = false;
      for (const passed of this.passWaiters.splice(0)) passed();
      if (this.wokenAgain) {
        this.wokenAgain = false;
        this.wake();
      }
    });
  }

  private async fanOut(): Promise<void> {
    try {
      for (;;) {
        const batch = await this.events.findPage(this.tail!, BATCH);
        if (batch.length === 0) return;
        // Its own trace: a commit's request may have woken the fan-out, but does not own it.
        inLinkedSpan(
          SEND_SPAN,
          traceParentsOf(batch),
          () => {
            for (const stream of this.streams) if (stream.live) this.sendLive(stream, batch);
          },
          { root: true },
        );
        this.tail = batch.at(-1)!;
        if (batch.length < BATCH) return;
      }
    } catch (error) {
      // The next wake (a commit or the timer) tries again from the same tail.
      this.logger.warn(`new events not read: ${(error as Error).message}`);
    }
  }

  /**
   * Sends what the stream missed, page by page, then hands it to the fan-out (docs/events.md,
   * "The stream"). It goes live only when its cursor is at or past the fan-out's tail, read in
   * the same turn as the page's answer: the fan-out has sent every live stream everything up to
   * its tail and will send everything after it, and this stream has everything up to its cursor,
   * so nothing falls between them; each stream skips what it already has, so nothing repeats.
   * A page that found nothing new while the tail is ahead was read before the fan-out moved on
   * (read again at once) or on a read node behind it (read again after the fan-out's next pass):
   * no loop runs without its cursor or the tail moving, and each page waits for the event loop
   * and for the client to take what it was sent.
   */
  private async catchUp(stream: OpenStream): Promise<void> {
    try {
      if (this.tail === undefined) {
        const newest = await this.events.findNewestPosition();
        // Another stream may have set it meanwhile, and the fan-out moved it on: keep theirs.
        this.tail ??= newest;
      }
      for (;;) {
        const [from, tailBefore] = [stream.cursor, this.tail];
        const batch = await this.events.findPage(from, BATCH);
        if (stream.closed) return;
        if (batch.length > 0)
          inLinkedSpan(SEND_SPAN, traceParentsOf(batch), () => this.send(stream, batch));
        const moved = isBefore(from, stream.cursor);
        if (!(moved && batch.length === BATCH)) {
          if (!isBefore(stream.cursor, this.tail)) {
            stream.live = true;
            return;
          }
          if (!moved && !isBefore(tailBefore, this.tail)) await this.wait(stream, this.nextPass());
        }
        await setImmediate();
        if (!(await this.clientKeepsUp(stream))) {
          this.close(stream, true);
          return;
        }
        if (stream.closed) return;
      }
    } catch (error) {
      this.logger.warn(`event stream ended: ${(error as Error).message}`);
      this.close(stream);
    }
  }

  /**
   * Waits while the client has more than CATCH_UP_HIGH_WATER_BYTES to take, so a client reading
   * at its own pace is never cut; false when it took nothing for CATCH_UP_STALL_MS.
   */
  private async clientKeepsUp(stream: OpenStream): Promise<boolean> {
    while (!stream.closed && stream.sink.buffered > CATCH_UP_HIGH_WATER_BYTES) {
      if (!(await this.wait(stream, stream.sink.drain(), CATCH_UP_STALL_MS))) return false;
    }
    return true;
  }

  /** Settles when the fan-out's current or next pass ends. */
  private nextPass(): Promise<void> {
    return new Promise((resolve) => this.passWaiters.push(resolve));
  }

  /** Waits for `signal` or the stream's close: true, or false when `ms` ran out first. */
  private wait(stream: OpenStream, signal: Promise<void>, ms?: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => done(false), ms);
      timer?.unref();
      const done = (value: boolean) => {
        clearTimeout(timer);
        stream.stopWaiting = undefined;
        resolve(value);
      };
      stream.stopWaiting = () => done(true);
      void signal.then(() => done(true));
    });
  }

  /** Writes `batch` to a live stream, and disconnects a client that has stopped reading. */
  private sendLive(stream: OpenStream, batch: StoredPetEvent[]): void {
    if (stream.sink.closed) {
      this.close(stream);
      return;
    }
    this.send(stream, batch);
    if (stream.sink.buffered > MAX_BUFFERED_BYTES) this.close(stream, true);
  }

  private send(stream: OpenStream, batch: StoredPetEvent[]): void {
    let chunk = '';
    let newest: StoredPetEvent | undefined;
    for (const event of batch) {
      if (!isBefore(stream.cursor, event)) continue;
      chunk += `id: ${eventIdOf(event)}\nevent: ${event.type}\ndata: ${eventJson(event)}\n\n`;
      stream.cursor = newest = event;
    }
    if (newest === undefined || stream.closed) return;
    this.metrics?.eventLag.observe({ reader: 'stream' }, ageSeconds(newest.occurredAt));
    stream.sink.write(chunk);
  }

  /** Ends a stream whose key a request would now be refused with `refusal`, telling why. */
  private endRefused(stream: OpenStream, refusal: ApiError): void {
    if (stream.closed) return;
    stream.sink.write(`event: ${KEY_REFUSED_EVENT}\ndata: ${JSON.stringify(refusal.body)}\n\n`);
    this.close(stream);
  }

  /** Ends the streams whose key has expired, as the guard would refuse it. */
  private endExpired(): void {
    const now = Date.now();
    for (const stream of [...this.streams]) {
      if (stream.keyExpiresAt <= now)
        this.endRefused(stream, unauthorized(INVALID_API_KEY_MESSAGE));
    }
  }

  /**
   * Reads the keys of the open streams from the database, past the guard's cache, and ends the
   * streams of those revoked, expired or without the scope; the others learn their key's expiry
   * as it is now. One pass at a time; a failed one leaves the streams open until the next.
   */
  private async recheckKeys(): Promise<void> {
    const ids = new Set(this.perKey.keys());
    if (this.recheckingKeys || ids.size === 0) return;
    this.recheckingKeys = true;
    try {
      const valid = await this.keys.recheck([...ids]);
      // A stream opened during the query was verified by the guard just now.
      for (const stream of [...this.streams].filter(({ keyId }) => ids.has(keyId))) {
        const key = valid.get(stream.keyId);
        if (!key) this.endRefused(stream, unauthorized(INVALID_API_KEY_MESSAGE));
        else if (!key.scopes.includes(STREAM_SCOPE))
          this.endRefused(stream, lacksScope(STREAM_SCOPE));
        else stream.keyExpiresAt = expiryOf(key);
      }
    } catch (error) {
      this.logger.warn(`keys of open event streams not checked again: ${(error as Error).message}`);
    } finally {
      this.recheckingKeys = false;
    }
  }

  private startTimers(): void {
    if (this.timers.length > 0) return;
    this.timers = [
      setInterval(() => {
        for (const stream of [...this.streams]) {
          if (stream.sink.closed) this.close(stream);
          else stream.sink.write(': keep-alive\n\n');
        }
      }, this.config.eventStreamHeartbeatSeconds * 1000),
      setInterval(() => this.wake(), POLL_MS),
      setInterval(() => this.endExpired(), EXPIRY_CHECK_MS),
      setInterval(() => void this.recheckKeys(), KEY_RECHECK_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}

/** When a key expires, in ms since the epoch; Infinity: never. */
function expiryOf(key: ApiKeyPrincipal): number {
  return key.expiresAt?.getTime() ?? Infinity;
}

function traceParentsOf(batch: StoredPetEvent[]): (string | null)[] {
  return batch.map((event) => event.traceContext);
}
