import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A URL on loopback where nothing listens: every connection is refused. Port 1 lies below the range
 * the kernel hands out for port 0, so no server a suite running alongside starts can take it.
 */
export const REFUSING_URL = 'http://127.0.0.1:1/hook';

/** One request the receiver got. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** How the receiver answers a request: the status, headers, and how long it takes. */
export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

/**
 * A webhook receiver on loopback, as a test's real target: it records every request, answers as
 * `answer` says (200 by default), and counts how many requests for one `webhook-id` it was
 * handling at the same time, the most ever.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (delivery: ReceivedDelivery, index: number) => ReceiverAnswer = () => ({ status: 200 });
  /** The most requests handled at once for one webhook-id. */
  maxConcurrentPerId = 0;
  /** The most requests handled at once in all. */
  maxConcurrent = 0;
  private readonly inFlight = new Map<string, number>();
  private open = 0;
  private readonly server: Server;

  private constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const delivery = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        const id = String(request.headers['webhook-id']);
        const index = this.received.push(delivery) - 1;
        this.track(id, 1);
        const { status, headers = {}, delayMs = 0 } = this.answer(delivery, index);
        setTimeout(() => {
          this.track(id, -1);
          response.writeHead(status, headers).end();
        }, delayMs);
      });
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The webhook-ids received, in order. */
  get ids(): string[] {
    return this.received.map(({ headers }) => String(headers['webhook-id']));
  }

  /** Resolves once `count` requests have arrived; fails after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`${this.received.length} of ${count} deliveries arrived`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private track(id: string, change: 1 | -1): void {
    const now = (this.inFlight.get(id) ?? 0) + change;
    this.inFlight.set(id, now);
    this.open += change;
    this.maxConcurrentPerId = Math.max(this.maxConcurrentPerId, now);
    this.maxConcurrent = Math.max(this.maxConcurrent, this.open);
  }
}
