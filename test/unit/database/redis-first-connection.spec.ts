import { Redis } from 'ioredis';
import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForFirstConnection } from '../../../src/database/redis-first-connection.js';

interface Listener {
  port: number;
  close(): Promise<void>;
}

/** A TCP listener that accepts connections and never answers: a Redis that hangs. */
async function silentListener(): Promise<Listener> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      server.close();
      await once(server, 'close');
    },
  };
}

const REDIS_URL = process.env.TEST_REDIS_URL;

describe('waitForFirstConnection', () => {
  const clients: Redis[] = [];
  const listeners: Listener[] = [];
  const listen = async () => {
    const listener = await silentListener();
    listeners.push(listener);
    return listener;
  };
  const client = (port: number) => {
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    clients.push(redis);
    return redis;
  };
  afterEach(async () => {
    clients.splice(0).forEach((redis) => redis.disconnect());
    await Promise.all(listeners.splice(0).map((listener) => listener.close()));
  });

  it.skipIf(!REDIS_URL && !process.env.CI)(
    'answers true once the client is ready, and at once when it already is',
    async () => {
      if (!REDIS_URL) throw new Error('CI must set TEST_REDIS_URL');
      const redis = new Redis(REDIS_URL, { enableOfflineQueue: false });
      clients.push(redis);
      expect(await waitForFirstConnection(redis)).toBe(true);
      expect(redis.status).toBe('ready');
      expect(await waitForFirstConnection(redis)).toBe(true);
    },
  );

  it('answers false when Redis refuses the connection', async () => {
    const listener = await silentListener();
    await listener.close(); // its port is free now: nothing listens there
    expect(await waitForFirstConnection(client(listener.port))).toBe(false);
  });

  it('answers false when Redis accepts but never answers its ready check', async () => {
    const redis = client((await listen()).port);
    expect(await waitForFirstConnection(redis)).toBe(false);
    expect(redis.status).not.toBe('ready');
  });
});
