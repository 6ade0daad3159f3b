import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics.js';
import { ageSeconds } from './events.service.js';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { ApiError } from '../errors/api-error.js';
import { eventIdOf, type EventPosition, isBefore, START } from './event-position.js';
import { eventJson } from './event-json.js';
import { PetEventsRepository, type StoredPetEvent } from './pet-events.repository.js';

/** Looks for new events this often even without a notification (one may be lost). */
const POLL_MS = 1_000;

/** Events read per query, when a stream catches up and when new ones are fanned out. */
const BATCH = 100;
/** A client this far behind in reading is disconnected; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Where an open stream writes: the response body. */
export interface StreamSink {
  write(chunk: string): void;
  /** Bytes written but not yet taken by the client. */
  readonly buffered: number;
  end(): void;
}

interface OpenStream {
  keyId: number;
  sink: StreamSink;
  /** The last event this stream was sent (or its start). */
  cursor: EventPosition;
  /** Caught up: new events reach it from the fan-out. */
  live: boolean;
  closed: boolean;
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
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly events: PetEventsRepository,
    private readonly notifications: ChangeNotifications,
    private readonly config: AppConfig,
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
  }

  /**
   * Opens a stream that sends every event after `after`, or, without it, every event from now
   * on. Refuses with 429 past the key's limit on this instance.
   */
  open(keyId: number, after: EventPosition | undefined, sink: StreamSink): OpenStream {
    const open = this.perKey.get(keyId) ?? 0;
    if (open >= this.config.eventStreamsPerKey) {
      throw new ApiError(
        'RATE_LIMITED',
        `This API key already has ${open} open event streams (the most allowed); close one first`,
        { 'Retry-After': '1' },
      );
    }
    this.perKey.set(keyId, open + 1);
    const stream: OpenStream = { keyId, sink, cursor: after ?? START, live: false, closed: false };
    this.streams.add(stream);
    this.startTimers();
    sink.write(': connected\n\n');
    void this.catchUp(stream, after === undefined);
    return stream;
  }

  close(stream: OpenStream): void {
    if (stream.closed) return;
    stream.closed = true;
    this.streams.delete(stream);
    const open = this.perKey.get(stream.keyId)! - 1;
    if (open === 0) this.perKey.delete(stream.keyId);
    else this.perKey.set(stream.keyId, open);
    stream.sink.end();
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
        for (const stream of this.streams) if (stream.live) this.send(stream, batch);
        this.tail = batch.at(-1)!;
        if (batch.length < BATCH) return;
      }
    } catch (error) {
      // The next wake (a commit or the timer) tries again from the same tail.
      this.logger.warn(`new events not read: ${(error as Error).message}`);
    }
  }

  /**
   * Sends what the stream missed, until it has reached the fan-out's tail; then the fan-out
   * takes over. Both read the same order, and each stream skips what it already has, so the
   * hand-over repeats and skips nothing. The tail is always a position read from the database,
   * never a client's cursor (which may lie beyond every event), and each pass either moves the
   * cursor or ends, so the loop cannot spin.
   */
  private async catchUp(stream: OpenStream, fromNow: boolean): Promise<void> {
    try {
      if (this.tail === undefined) {
        const newest = await this.events.findNewestPosition();
        // Another stream may have set it meanwhile, and the fan-out moved it on: keep theirs.
        this.tail ??= newest;
      }
      if (fromNow) stream.cursor = this.tail;
      for (;;) {
        const batch = await this.events.findPage(stream.cursor, BATCH);
        if (stream.closed) return;
        this.send(stream, batch);
        // Nothing visible after the cursor: what lies between it and the tail is final and empty.
        if (batch.length === BATCH || (batch.length > 0 && isBefore(stream.cursor, this.tail)))
          continue;
        stream.live = true;
        return;
      }
    } catch (error) {
      this.logger.warn(`event stream ended: ${(error as Error).message}`);
      this.close(stream);
    }
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
    if (stream.sink.buffered > MAX_BUFFERED_BYTES) this.close(stream);
  }

  private startTimers(): void {
    if (this.timers.length > 0) return;
    this.notifications.listen(() => this.wake());
    this.timers = [
      setInterval(() => {
        for (const stream of this.streams) stream.sink.write(': keep-alive\n\n');
      }, this.config.eventStreamHeartbeatSeconds * 1000),
      setInterval(() => this.wake(), POLL_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
