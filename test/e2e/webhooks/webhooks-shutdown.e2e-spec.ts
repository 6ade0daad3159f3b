import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

/** How long the receiver takes to answer: the attempt is in flight this long. */
const ANSWER_MS = 1_000;

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
      }),
    );
    apps.push(app);
    return app;
  };

  it('lets the attempt in flight finish and records it, so the next instance sends it no more', async () => {
    database = await createTestDatabase(engine);
    receiver = await WebhookReceiver.start();
    receiver.answer = () => ({ status: 200, delayMs: ANSWER_MS });
    const first = await start();
    const { key } = await first
      .get(ApiKeyStore)
      .create('hooks', { scopes: ['pets:write', 'webhooks:manage'] });
    const call = async (method: 'GET' | 'POST', url: string, body?: object) =>
      first.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body && { payload: JSON.stringify(body) }),
      });
    const { id } = (await call('POST', '/v1/webhooks', { url: receiver.url })).json();
    expect((await call('POST', '/v1/pets', { name: 'Rex', categoryId: 1 })).statusCode).toBe(201);
    await receiver.waitFor(1);

    // What SIGTERM runs: the shutdown hooks. The attempt in flight ends before close does.
    await apps.shift()!.close();
    expect(Date.now() - receiver.received[0].receivedAt).toBeGreaterThanOrEqual(ANSWER_MS - 50);

    const next = await start();
    const webhook = await next.inject({
      method: 'GET',
      url: `/v1/webhooks/${id}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(webhook.json()).toMatchObject({
      lastSuccessAt: expect.any(String),
      lastFailureAt: null,
      pendingDeliveries: 0,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);
  });
});
