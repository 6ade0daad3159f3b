import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { ThrottledTask } from '../time/throttled-task.js';

/** The channel processes announce committed events on, and listen to. */
const CHANNEL = 'pet_events';
/** How long to wait before listening again after the connection broke (a failover, say). */
const RECONNECT_MS = 1_000;
/** At most one NOTIFY per this many milliseconds: a bounded cost however fast changes commit. */
const ANNOUNCE_INTERVAL_MS = 50;

/**
 * Tells the other processes on the database that events were committed, and hears when they did
 * (docs/events.md, "The stream"). A notification only says "look": the events are read from the
 * table, so one that is lost costs latency, never an event.
 */
export abstract class ChangeNotifications implements OnApplicationShutdown {
  /** Calls `onChange` after commits of other processes; listens from the first call on. */
  abstract listen(onChange: () => void): void;
  /** Says that this process committed events; call it after the commit. */
  abstract announce(): void;
  abstract close(): Promise<void>;

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

/** SQLite is one process's database: its own commits wake its streams directly. */
export class LocalChangeNotifications extends ChangeNotifications {
  listen(): void {}
  announce(): void {}
  async close(): Promise<void> {}
}

/**
 * PostgreSQL LISTEN and NOTIFY on a connection of its own, outside the pool, opened at first use
 * and reopened when it breaks. NOTIFY is sent after the commit, never inside the writing
 * transaction: PostgreSQL serialises the commits of notifying transactions on one lock, which held
 * createPet to a fifth of its rate (docs/performance.md, "The event write"). One NOTIFY
 * at a time, at most one per ANNOUNCE_INTERVAL_MS; the commits made meanwhile share the next.
 */
export class PostgresChangeNotifications extends ChangeNotifications {
  private readonly logger = new Logger('ChangeNotifications');
  private client?: Promise<pg.Client>;
  /** The connection `client` opens or opened: an older one's events are ignored. */
  private current?: pg.Client;
  private readonly listeners: (() => void)[] = [];
  private closed = false;
  private retry?: NodeJS.Timeout;
  private readonly announcements = new ThrottledTask(ANNOUNCE_INTERVAL_MS, () => this.notify());

  constructor(private readonly url: string) {
    super();
  }

  listen(onChange: () => void): void {
    this.listeners.push(onChange);
    if (this.listeners.length > 1) return;
    if (this.client)
      void this.client.then(
        (client) => this.startListening(client),
        () => {},
      );
    else void this.connected().catch(() => {});
  }

  announce(): void {
    this.announcements.request();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = await this.client?.catch(() => undefined);
    await client?.end().catch(() => {});
  }

  /** A lost announcement costs the others at most their poll interval. */
  private async notify(): Promise<void> {
    try {
      await (await this.connected()).query(`NOTIFY ${CHANNEL}`);
    } catch (error) {
      this.logger.warn(`committed events not announced: ${(error as Error).message}`);
    }
  }

  private connected(): Promise<pg.Client> {
    this.client ??= this.connect();
    return this.client;
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'animal-store' });
    this.current = client;
    client.on('notification', () => this.changed());
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      await client.connect();
      if (this.listeners.length > 0) await this.startListening(client);
      return client;
    } catch (error) {
      this.reconnect(client);
      throw error;
    }
  }

  private async startListening(client: pg.Client): Promise<void> {
    try {
      await client.query(`LISTEN ${CHANNEL}`);
      // Commits made while no connection listened are in the table: look once now.
      this.changed();
    } catch (error) {
      this.logger.warn(`not listening for committed events: ${(error as Error).message}`);
      this.reconnect(client);
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  private reconnect(client: pg.Client): void {
    if (this.closed || client !== this.current) return;
    client.end().catch(() => {});
    this.current = undefined;
    this.client = undefined;
    // Only a listener needs the connection back at once; an announcement reopens it itself.
    if (this.listeners.length === 0) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connected().catch(() => {});
    }, RECONNECT_MS);
  }
}
