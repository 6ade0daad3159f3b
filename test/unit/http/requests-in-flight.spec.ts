import Fastify from 'fastify';
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configureHttpServer } from '../../../src/http/http-server.js';
import { RequestsInFlight } from '../../../src/http/requests-in-flight.js';
import { RouteTable } from '../../../src/http/route-table.js';

/**
 * A Fastify server wired as the service's (http-server.ts) and counted by `inFlight`, whose /held
 * route answers when `release` is called.
 */
async function serverCountedBy(inFlight: RequestsInFlight) {
  const fastify = Fastify();
  configureHttpServer(fastify, new RouteTable(), inFlight);
  // A hook before the route's answers some requests itself, as the request checks do.
  fastify.addHook('onRequest', (req, reply, done) => {
    if (req.headers['x-refuse']) void reply.code(400).send();
    else done();
  });
  const releases: (() => void)[] = [];
  fastify.get('/held', () => new Promise<string>((resolve) => releases.push(() => resolve('ok'))));
  // Answered at once with a body that stays open until `release`, as an event stream is.
  fastify.get('/stream', (_req, reply) => {
    const body = new PassThrough();
    releases.push(() => body.end());
    body.write(': connected\n\n');
    return reply.type('text/event-stream').send(body);
  });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const { port } = fastify.server.address() as { port: number };
  return { fastify, port, release: () => releases.splice(0).forEach((release) => release()) };
}

const servers: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('RequestsInFlight', () => {
  it('counts a request from its arrival until it is answered', async () => {
    const inFlight = new RequestsInFlight();
    const { fastify, port, release } = await serverCountedBy(inFlight);
    servers.push(fastify);

    const answered = Promise.all([1, 2].map(() => fetch(`http://127.0.0.1:${port}/held`)));
    await vi.waitFor(() => expect(inFlight.size).toBe(2));
    release();
    await answered;

    await vi.waitFor(() => expect(inFlight.size).toBe(0));
  });

  it('takes out a request an earlier hook answered, and one whose client went away, once', async () => {
    const inFlight = new RequestsInFlight();
    const { fastify, port, release } = await serverCountedBy(inFlight);
    servers.push(fastify);

    const refused = await fetch(`http://127.0.0.1:${port}/held`, { headers: { 'x-refuse': '1' } });
    expect(refused.status).toBe(400);
    const abandoned = request({ port, host: '127.0.0.1', path: '/held' });
    abandoned.on('error', () => {});
    abandoned.end();
    await vi.waitFor(() => expect(inFlight.size).toBe(1));
    abandoned.destroy();
    await vi.waitFor(() => expect(inFlight.size).toBe(0));
    release();

    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFlight.size).toBe(0);
  });

  it('takes out a response that stays open once its headers are sent', async () => {
    const inFlight = new RequestsInFlight();
    const { fastify, port, release } = await serverCountedBy(inFlight);
    servers.push(fastify);

    const streams = await Promise.all([1, 2].map(() => fetch(`http://127.0.0.1:${port}/stream`)));
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    const held = fetch(`http://127.0.0.1:${port}/held`);
    try {
      // The streams are still open: the one request waiting is the held one.
      await vi.waitFor(() => expect(inFlight.size).toBe(1));
    } finally {
      release();
      await Promise.all([held, ...streams.map((stream) => stream.text())]);
    }

    expect(inFlight.size).toBe(0);
  });

  it('tells how many in flight the requests arriving lately found, and forgets them', async () => {
    const inFlight = new RequestsInFlight();
    const { fastify, port, release } = await serverCountedBy(inFlight);
    servers.push(fastify);
    expect(inFlight.queueLately()).toBe(0);

    const answered = Promise.all([1, 2, 3].map(() => fetch(`http://127.0.0.1:${port}/held`)));
    await vi.waitFor(() => expect(inFlight.size).toBe(3));
    // They found 1, 2 and 3 in flight, themselves included.
    expect(inFlight.queueLately()).toBe(2);
    release();
    await answered;

    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(inFlight.queueLately()).toBe(0);
  });
});
