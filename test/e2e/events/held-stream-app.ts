import { connect, type Socket } from 'node:net';
import { setImmediate } from 'node:timers/promises';
import { ApiKeyVerifier } from '../../../src/auth/api-key-verifier.js';
import type { ApiKeyPrincipal } from '../../../src/auth/principal.js';
import type { EventPosition } from '../../../src/events/event-position.js';
import { EventStreams } from '../../../src/events/event-streams.js';
import {
  PetEventsRepository,
  type StoredPetEvent,
} from '../../../src/events/pet-events.repository.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import type { Engine } from '../../support/test-database.js';

/** One call a test holds: `reached` once it arrives, and it goes on at `release()`. */
export interface Held {
  reached: Promise<void>;
  release(): void;
}

/**
 * Calls a test may hold at a chosen point, so an interleaving that a real race produces once in
 * thousands of runs happens every time. Each `holdNext` catches one matching call.
 */
export class Holds<A extends unknown[]> {
  private armed: {
    matches: (...args: A) => boolean;
    reach: () => void;
    released: Promise<void>;
  }[] = [];

  holdNext(matches: (...args: A) => boolean = () => true): Held {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.armed.push({ matches, reach, released });
    return { reached, release };
  }

  /** The hold this call meets, if one is armed for it; undefined lets the call run on untouched. */
  meet(...args: A): Promise<void> | undefined {
    const index = this.armed.findIndex(({ matches }) => matches(...args));
    if (index === -1) return undefined;
    const [hold] = this.armed.splice(index, 1);
    hold.reach();
    return hold.released;
  }
}

/** Calls a test waits to see happen, without holding them. */
export class Sightings<A extends unknown[]> {
  private awaited: { matches: (...args: A) => boolean; seen: () => void }[] = [];

  /** Settles once a matching call is seen. */
  next(matches: (...args: A) => boolean): Promise<void> {
    return new Promise((seen) => this.awaited.push({ matches, seen }));
  }

  see(...args: A): void {
    this.awaited = this.awaited.filter(
      ({ matches, seen }) => !(matches(...args) && (seen(), true)),
    );
  }
}

/** The real repository; a held page or retention check has read the database before it waits. */
class HeldPetEventsRepository extends PetEventsRepository {
  readonly pages = new Holds<[EventPosition]>();
  /** Each page read, with the position it was read after, whoever read it. */
  readonly pagesRead = new Sightings<[EventPosition, StoredPetEvent[]]>();
  readonly purgeChecks = new Holds<[]>();

  override async findPage(after: EventPosition, limit: number): Promise<StoredPetEvent[]> {
    const page = await super.findPage(after, limit);
    this.pagesRead.see(after, page);
    const held = this.pages.meet(after);
    if (held) await held;
    return page;
  }

  override async findPurgedThrough(): Promise<EventPosition> {
    const purged = await super.findPurgedThrough();
    const held = this.purgeChecks.meet();
    if (held) await held;
    return purged;
  }
}

/** The real verifier; a held key has been looked up before it waits. */
class HeldApiKeyVerifier extends ApiKeyVerifier {
  readonly verifications = new Holds<[string]>();

  override async verify(key: string): Promise<ApiKeyPrincipal | undefined> {
    const principal = await super.verify(key);
    const held = this.verifications.meet(key);
    if (held) await held;
    return principal;
  }
}

/** The real streams, telling a test when a request has gone through `open`, opened or not. */
class WatchedEventStreams extends EventStreams {
  private openWaiters: (() => void)[] = [];

  /** Settles once the next call of `open` has returned or thrown. */
  nextOpen(): Promise<void> {
    return new Promise((resolve) => this.openWaiters.push(resolve));
  }

  override open(...args: Parameters<EventStreams['open']>): ReturnType<EventStreams['open']> {
    try {
      return super.open(...args);
    } finally {
      for (const wake of this.openWaiters.splice(0)) wake();
    }
  }
}

export interface HeldApp extends TestApp {
  baseUrl: string;
  repository: HeldPetEventsRepository;
  verifier: HeldApiKeyVerifier;
  streams: WatchedEventStreams;
  /**
   * Opens a raw connection and resolves with it and a promise that settles once the server has
   * seen that connection close.
   */
  connect(): Promise<{ socket: Socket; closedOnServer: Promise<void> }>;
}

/**
 * The real application, listening on loopback, with the event repository, the key verifier and
 * the streams wrapped so that a test can hold a call where a race would otherwise strike rarely.
 */
export async function startHeldApp(
  engine: Engine,
  env: Record<string, string> = {},
): Promise<HeldApp> {
  const t = await startTestApp(engine, env, {
    override: (module) =>
      module
        .overrideProvider(PetEventsRepository)
        .useClass(HeldPetEventsRepository)
        .overrideProvider(ApiKeyVerifier)
        .useClass(HeldApiKeyVerifier)
        .overrideProvider(EventStreams)
        .useClass(WatchedEventStreams),
  });
  const { app } = t;
  await app.listen(0, '127.0.0.1');
  const baseUrl = await app.getUrl();

  /** The server's end of each connection, by the client's port. */
  const serverSockets = new Map<number, Socket>();
  app.getHttpServer().on('connection', (socket: Socket) => {
    const port = socket.remotePort!;
    serverSockets.set(port, socket);
    socket.once('close', () => serverSockets.delete(port));
  });

  return {
    ...t,
    baseUrl,
    repository: app.get<PetEventsRepository, HeldPetEventsRepository>(PetEventsRepository),
    verifier: app.get<ApiKeyVerifier, HeldApiKeyVerifier>(ApiKeyVerifier),
    streams: app.get<EventStreams, WatchedEventStreams>(EventStreams),
    connect: async () => {
      const { port } = new URL(baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      let server: Socket | undefined;
      while (!(server = serverSockets.get(socket.localPort!))) await setImmediate();
      const closedOnServer = new Promise<void>((resolve) => {
        if (server.destroyed) resolve();
        else server.once('close', () => resolve());
      });
      return { socket, closedOnServer };
    },
  };
}

/** Where in a stream's opening its client resets the connection. */
export type ResetStage =
  | 'amid the request head'
  | 'right after the request head'
  | 'during the key check'
  | 'during the retention check'
  | 'after : connected';

export const RESET_STAGES: readonly ResetStage[] = [
  'amid the request head',
  'right after the request head',
  'during the key check',
  'during the retention check',
  'after : connected',
];

/**
 * Sends a stream request for `key` (resuming after `resumeFrom` when the stage holds the
 * retention check) and resets the connection at `stage`. Resolves once the server has seen the
 * connection close and, for a held stage, the request has gone on through `open`.
 */
export async function resetStreamRequest(
  t: HeldApp,
  stage: ResetStage,
  key: string,
  resumeFrom: string,
): Promise<void> {
  const resume = stage === 'during the retention check' ? `Last-Event-ID: ${resumeFrom}\r\n` : '';
  const head = `GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${resume}\r\n`;
  const hold =
    stage === 'during the key check'
      ? t.verifier.verifications.holdNext((verified) => verified === key)
      : stage === 'during the retention check'
        ? t.repository.purgeChecks.holdNext()
        : undefined;
  const { socket, closedOnServer } = await t.connect();
  if (stage === 'amid the request head') {
    socket.write(head.slice(0, head.indexOf('Authorization') + 20));
  } else if (stage === 'after : connected') {
    let received = '';
    const connected = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (received.includes(': connected\n\n')) resolve();
      }),
    );
    socket.write(head);
    await connected;
  } else {
    socket.write(head);
  }
  if (hold) await hold.reached;
  socket.resetAndDestroy();
  await closedOnServer;
  if (hold) {
    const opened = t.streams.nextOpen();
    hold.release();
    await opened;
  }
}
