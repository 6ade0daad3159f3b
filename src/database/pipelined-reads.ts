import type { OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import type { Row } from './sql-runner.js';

/** How many connections the reads share: a slow read holds up only the reads sent behind it. */
const CONNECTIONS = 2;

/**
 * The PostgreSQL connections that reads outside a transaction share, each in pg's pipeline mode:
 * a statement is sent at once, without waiting for the answers ahead of it, and the answers come
 * back in order. The reads of one event-loop turn go out in one write and come back in one read,
 * and none takes a connection from the pool and gives it back (docs/performance.md, "Pipelined
 * reads"). A connection opens at first use; one that breaks fails the reads it carries, and the
 * next read opens another.
 */
export class PipelinedReads implements OnApplicationShutdown {
  private readonly connections = new Array<Promise<pg.Client> | undefined>(CONNECTIONS).fill(
    undefined,
  );
  private turn = 0;
  private closed = false;

  /** `config`: how to connect, as the pool's connections do (data-source.ts). */
  constructor(private readonly config: pg.ClientConfig) {}

  /** Runs the named statement `name` (prepared once per connection) with `values`. */
  async query(name: string, text: string, values: unknown[]): Promise<Row[]> {
    this.turn = (this.turn + 1) % CONNECTIONS;
    const client = await this.connection(this.turn);
    return (await client.query<Row>({ name, text, values })).rows;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const opened = this.connections.filter((opening) => opening !== undefined);
    const clients = await Promise.all(opened.map((opening) => opening.catch(() => undefined)));
    const open = clients.filter((client) => client !== undefined);
    await Promise.all(open.map((client) => client.end().catch(() => {})));
  }

  private connection(slot: number): Promise<pg.Client> {
    const current = this.connections[slot];
    if (current) return current;
    if (this.closed) return Promise.reject(new Error('database reads are closed'));
    const client = new pg.Client({ ...this.config, pipeline: true });
    const opening = client.connect().then(() => client);
    // A broken connection is let go: its reads have failed, and the next read opens another.
    const forget = () => {
      if (this.connections[slot] !== opening) return;
      this.connections[slot] = undefined;
      client.end().catch(() => {});
    };
    opening.catch(forget);
    client.on('error', forget);
    client.on('end', forget);
    this.connections[slot] = opening;
    return opening;
  }
}
