import { Injectable, Optional } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics.js';

/** How long a window of arrivals lasts (`queueLately`). */
const WINDOW_MS = 100;

declare module 'fastify' {
  interface FastifyRequest {
    /** Counted in RequestsInFlight and not yet taken out of it. */
    countedInFlight: boolean;
  }
}

/**
 * The requests this process has received and not yet begun to answer: how many clients are
 * waiting on it now. A response that stays open, as an event stream does, has been answered once
 * its headers are sent: its client waits on events, not on this process. Read at each scrape
 * (`animal_store_http_requests_in_flight`), and by the webhook worker, which gives way to clients
 * who queue (docs/events.md, "Under load").
 */
@Injectable()
export class RequestsInFlight {
  private count = 0;
  /** The requests that arrived in the current window, and the in-flight counts they found. */
  private window = { startedAt: 0, arrivals: 0, found: 0 };
  private lastWindow = { arrivals: 0, found: 0 };

  constructor(@Optional() metrics?: Metrics) {
    if (!metrics) return;
    const size = () => this.count;
    new Gauge({
      name: 'animal_store_http_requests_in_flight',
      help: 'Requests received and not yet answered.',
      registers: [metrics.registry],
      collect() {
        this.set(size());
      },
    });
  }

  get size(): number {
    return this.count;
  }

  /**
   * How many requests in flight, itself included, a request arriving lately found on average:
   * how many clients queue here. Over the current and the last window of WINDOW_MS; 0 when none
   * arrived. An average over arrivals, not the count now: under saturation the count swings from
   * all the clients to none as each turn of the event loop answers what it read.
   */
  queueLately(): number {
    this.rotate(performance.now());
    const arrivals = this.window.arrivals + this.lastWindow.arrivals;
    return arrivals === 0 ? 0 : (this.window.found + this.lastWindow.found) / arrivals;
  }

  private rotate(now: number): void {
    const age = now - this.window.startedAt;
    if (age < WINDOW_MS) return;
    this.lastWindow = age < 2 * WINDOW_MS ? this.window : { arrivals: 0, found: 0 };
    this.window = { startedAt: now, arrivals: 0, found: 0 };
  }

  /** A request is in flight from its first hook on (http-server.ts). */
  arrive(request: FastifyRequest): void {
    request.countedInFlight = true;
    this.count += 1;
    this.rotate(performance.now());
    this.window.arrivals += 1;
    this.window.found += this.count;
  }

  /**
   * Takes a request out, once, at the first of: its answer starting (the `onSend` hook of
   * http-server.ts), its client aborting, and its response ending (for a reply that never passed
   * `onSend`).
   */
  leave(request: FastifyRequest): void {
    if (!request.countedInFlight) return;
    request.countedInFlight = false;
    this.count -= 1;
  }

  /** Marks `fastify`'s requests, and takes out those that end or are aborted without `onSend`. */
  countOn(fastify: FastifyInstance): void {
    fastify.decorateRequest('countedInFlight', false);
    fastify.addHook('onResponse', (request, _reply, done) => {
      this.leave(request);
      done();
    });
    fastify.addHook('onRequestAbort', (request, done) => {
      this.leave(request);
      done();
    });
  }
}
