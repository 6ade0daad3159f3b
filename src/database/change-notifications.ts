import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';

/** The channel the `pet_events` trigger notifies on commit (migration 1795800000000). */
const CHANNEL = 'pet_events';
/** How long to wait before listening again after the connection broke (a failover, say). */
const RECONNECT_MS = 1_000;

/**
 * Hears that events were committed, through any process on the database (docs/events.md, "The
 * stream"). A notification only says "look": the events are read from the table, so one that is
 * lost costs latency, never an event.
 */
export abstract class ChangeNotifications implements OnApplicationShutdown {
  /**
   * Calls `onChange` after commits of other processes; listens from the first call on. Each
   * reader (the event streams, the webhook worker) calls it once with its own.
   */
  abstract listen(onChange: () => void): void;
  abstract close(): Promise<void>;

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

/** SQLite is one process's database: its own commits wake its streams directly. */
export class LocalChangeNotifications extends ChangeNotifications {
  listen(): void {}
  async close(): Promise<void> {}
}

/** PostgreSQL LISTEN on a connection of its own, outside the pool, reopened when it breaks. */
export class PostgresChangeNotifications extends ChangeNotifications {
  private readonly logger = new Logger('ChangeNotifications');
  private client?: pg.Client;
  private readonly listeners: (() => void)[] = [];
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(private readonly url: string) {
    super();
  }

  listen(onChange: () => void): void {
    this.listeners.push(onChange);
    if (this.listeners.length === 1) void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'animal-store' });
    this.client = client;
    client.on('notification', () => this.notify());
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Commits made while no connection listened are in the table: look once now.
      this.notify();
    } catch (error) {
      this.logger.warn(`not listening for committed events: ${(error as Error).message}`);
      this.reconnect(client);
    }
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private reconnect(client: pg.Client): void {
    if (this.closed || client !== this.client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.retry = setTimeout(() => void this.connect(), RECONNECT_MS);
  }
}
