import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { WebhookDeliveryWorker } from '../../../src/webhooks/webhook-delivery-worker.js';
import { createPet } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
};
/** More events than a batch holds: a batch cut short by nothing would send 20. */
const EVENTS = 30;

/**
 * A receiver as slow as a test needs: it holds each delivery's answer until the test lets it go,
 * and notes when each delivery started to arrive.
 */
class HoldingReceiver {
  /** Date.now() when each delivery's request arrived, in order. */
  readonly arrivals: number[] = [];
  readonly ids: string[] = [];
  private readonly held: (() => void)[] = [];
  /** How long an answer that is not held waits. */
  delayMs = 0;
  private holding = true;
  private readonly server: Server;

  private constructor() {
    this.server = createServer((request, response) => {
      this.arrivals.push(Date.now());
      this.ids.push(String(request.headers['webhook-id']));
      request.resume();
      request.on('end', () => {
        const answer = () => response.writeHead(200).end();
        if (this.holding) this.held.push(answer);
        else setTimeout(answer, this.delayMs);
      });
    });
  }

  static async start(): Promise<HoldingReceiver> {
    const receiver = new HoldingReceiver();
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Answers the deliveries held so far; later ones are held too. */
  answerHeld(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  /** Answers the deliveries held so far, and every later one after `delayMs`. */
  answerAll(): void {
    this.holding = false;
    this.answerHeld();
  }

  async waitFor(count: number): Promise<void> {
    await vi.waitFor(() => expect(this.arrivals.length).toBeGreaterThanOrEqual(count), {
      timeout: 10_000,
      interval: 10,
    });
  }

  close(): Promise<void> {
    this.answerAll();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A webhook owed a full batch and more: the first batch holds only the first event, whose answer
 * the receiver holds while the others commit; then that answer goes. Its id and a managing key.
 */
async function subscribeWithBacklog(
  t: TestApp,
  receiver: HoldingReceiver,
): Promise<{ id: number; manager: string }> {
  const manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] }))
    .key;
  const created = await t.request('POST', '/v1/webhooks', {
    key: manager,
    body: { url: receiver.url },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { id } = created.json<{ id: number }>();
  await createPet(t, { name: 'Pet 0', categoryId: 1 });
  await receiver.waitFor(1);
  for (let i = 1; i < EVENTS; i++) await createPet(t, { name: `Pet ${i}`, categoryId: 1 });
  return { id, manager };
}

/**
 * The API's promise (deleteWebhook; docs/events.md, "How deliveries are owed and sent"): once
 * `DELETE /v1/webhooks/{id}` has answered 204, at most the attempt under way may still arrive.
 * The delete comes while the receiver holds the answer to the first delivery of a full batch;
 * then every worker's sending is let end, and what arrived after the 204 is counted.
 */
async function deleteWhileSending(
  t: TestApp,
  receiver: HoldingReceiver,
  instances: NestFastifyApplication[],
): Promise<void> {
  const { id, manager } = await subscribeWithBacklog(t, receiver);
  receiver.answerHeld();
  // The second batch's first delivery: 19 more of that batch would follow it.
  await receiver.waitFor(2);

  // Deleted through an instance that is not sending, when there are two: its worker must stop.
  const [{ lease_owner: holder }] = await t.dataSource.query<{ lease_owner: string }[]>(
    `SELECT lease_owner FROM webhook_subscriptions WHERE id = ${id}`,
  );
  const workers = instances.map((instance) => instance.get(WebhookDeliveryWorker));
  expect(workers.map(({ owner }) => owner)).toContain(holder);
  const deleter = instances.find((_, i) => workers[i].owner !== holder) ?? instances[0];
  const deleted = await deleter.inject({
    method: 'DELETE',
    url: `/v1/webhooks/${id}`,
    headers: { authorization: `Bearer ${manager}` },
  });
  const answeredAt = Date.now();
  expect(deleted.statusCode).toBe(204);
  receiver.answerAll();

  await Promise.all(workers.map((worker) => worker.settled()));
  const afterDelete = receiver.arrivals.filter((arrivedAt) => arrivedAt > answeredAt);
  expect(afterDelete.length, `${afterDelete.length} deliveries arrived after the 204`).toBe(0);
  const feed = (await t.request('GET', '/v1/events?limit=2')).json<{ id: string }[]>();
  expect(receiver.ids).toEqual(feed.map((event) => event.id));
  expect(await t.dataSource.query('SELECT subscription_id FROM webhook_deliveries')).toEqual([]);
}

describe.each(ENGINES)('deleting a webhook while it is sent to [%s]', (engine) => {
  let t: TestApp;
  let receiver: HoldingReceiver;

  beforeAll(async () => {
    t = await startTestApp(engine, ENV);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    receiver = await HoldingReceiver.start();
  });
  afterEach(() => receiver.close());

  it('sends nothing after the 204: the attempt under way had arrived before it', async () => {
    await deleteWhileSending(t, receiver, [t.app]);
  });

  it('sends at most the attempt under way after the 204 to a receiver that answers quickly', async () => {
    const { id, manager } = await subscribeWithBacklog(t, receiver);
    receiver.delayMs = 5;
    receiver.answerAll();
    // In the middle of the second batch, whose attempts follow each other within milliseconds.
    await receiver.waitFor(5);
    const deleted = await t.request('DELETE', `/v1/webhooks/${id}`, { key: manager });
    const answeredAt = Date.now();
    expect(deleted.statusCode).toBe(204);

    await t.app.get(WebhookDeliveryWorker).settled();
    const afterDelete = receiver.arrivals.filter((arrivedAt) => arrivedAt > answeredAt);
    expect(
      afterDelete.length,
      `${afterDelete.length} deliveries arrived after the 204`,
    ).toBeLessThanOrEqual(1);
  });
});

describe.skipIf(!ENGINES.includes('postgres'))(
  'deleting a webhook that another instance sends to [postgres]',
  () => {
    let t: TestApp;
    let second: NestFastifyApplication;
    let receiver: HoldingReceiver;

    beforeAll(async () => {
      t = await startTestApp('postgres', ENV);
      second = await startSecondInstance(t, ENV);
      receiver = await HoldingReceiver.start();
    });
    afterAll(async () => {
      await second?.close();
      await t?.close();
      await receiver?.close();
    });

    it('stops the sending on the other instance too: nothing after the 204', async () => {
      await deleteWhileSending(t, receiver, [t.app, second]);
    });
  },
);
