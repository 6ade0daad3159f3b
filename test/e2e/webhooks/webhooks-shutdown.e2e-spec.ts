import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';
import { type ReceiverAnswer, WebhookReceiver } from '../../support/webhook-receiver.js';

/** How long SIGTERM waits for an attempt in flight (src/webhooks/webhook-delivery-worker.ts). */
const SHUTDOWN_WAIT_MS = 5_000;

describe.each(ENGINES)('webhooks when an instance stops [%s]', (engine) => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  const apps: NestFastifyApplication[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await receiver?.close();
    await database?.drop();
  });

  const start = async () => {
    const app = await createApp(
      loadConfig({
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        RATE_LIMIT_PER_MINUTE: '0',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      }),
    );
    apps.push(app);
    return app;
  };

  /**
   * A first instance with a webhook whose receiver answers as `answer` says, and a pet whose
   * delivery the receiver has begun to answer; the webhook's state is read through `read`.
   */
  const deliveryInFlight = async (answer: (index: number) => ReceiverAnswer) => {
    database = await createTestDatabase(engine);
    receiver = await WebhookReceiver.start();
    receiver.answer = (_delivery, index) => answer(index);
    const first = await start();
    const { key } = await first
      .get(ApiKeyStore)
      .create('hooks', { scopes: ['pets:write', 'webhooks:manage'] });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = (url: string, body: object) =>
      first.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) });
    const { id } = (await post('/v1/webhooks', { url: receiver.url })).json();
    expect((await post('/v1/pets', { name: 'Rex', categoryId: 1 })).statusCode).toBe(201);
    await receiver.waitFor(1);
    const read = async (app: NestFastifyApplication) =>
      (await app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers })).json();
    return { read };
  };

  it('lets the attempt in flight finish and records it, so the next instance sends it no more', async () => {
    const answerMs = 1_000;
    const { read } = await deliveryInFlight(() => ({ status: 200, delayMs: answerMs }));
    // What SIGTERM runs: the shutdown hooks. The attempt in flight ends before close does.
    await apps.shift()!.close();
    expect(Date.now() - receiver.received[0].receivedAt).toBeGreaterThanOrEqual(answerMs - 50);

    const next = await start();
    expect(await read(next)).toMatchObject({
      lastSuccessAt: expect.any(String),
      lastFailureAt: null,
      pendingDeliveries: 0,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);
  });

  it('cuts off an attempt that outlasts the wait, records nothing, and the next instance sends it again', async () => {
    const slowMs = SHUTDOWN_WAIT_MS + 3_000;
    const { read } = await deliveryInFlight((index) => ({
      status: 200,
      delayMs: index === 0 ? slowMs : 0,
    }));
    await apps.shift()!.close();
    // Closed before the receiver answered: the wait was cut off.
    expect(Date.now() - receiver.received[0].receivedAt).toBeLessThan(slowMs);

    const next = await start();
    await receiver.waitFor(2);
    expect(receiver.ids[1]).toBe(receiver.ids[0]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await read(next)).toMatchObject({
      lastSuccessAt: expect.any(String),
      lastFailureAt: null,
      pendingDeliveries: 0,
    });
  }, 30_000);
});
