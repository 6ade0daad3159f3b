import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};
const PETS = 40;

describe.skipIf(!ENGINES.includes('postgres'))('webhooks from two instances [postgres]', () => {
  let t: TestApp;
  let second: NestFastifyApplication;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp('postgres', ENV);
    second = await startSecondInstance(t, ENV);
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
    await receiver?.close();
  });

  it('delivers every event, in order, and never sends one attempt from both at once', async () => {
    const manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] }))
      .key;
    const created = await t.request('POST', '/v1/webhooks', {
      key: manager,
      body: { url: receiver.url },
    });
    const { secret } = created.json();
    // Slow enough that an attempt from the other instance would overlap it.
    receiver.answer = () => ({ status: 200, delayMs: 30 });

    const headers = { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' };
    await Promise.all(
      Array.from({ length: PETS }, (_, i) =>
        i % 2 === 0
          ? t.request('POST', '/v1/pets', { body: { name: `a${i}`, categoryId: 1 } })
          : second.inject({
              method: 'POST',
              url: '/v1/pets',
              headers,
              payload: JSON.stringify({ name: `b${i}`, categoryId: 1 }),
            }),
      ),
    );
    await receiver.waitFor(PETS, 20_000);

    const feed = (await t.request('GET', '/v1/events?limit=100')).json<{ id: string }[]>();
    expect(feed).toHaveLength(PETS);
    // Each attempt succeeded, so each event came once, in the feed's order.
    expect(receiver.ids).toEqual(feed.map(({ id }) => id));
    for (const delivery of receiver.received)
      new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    expect(receiver.maxConcurrentPerId).toBe(1);
    // One subscription is sent for by one instance at a time, one attempt after another.
    expect(receiver.maxConcurrent).toBe(1);
  });
});
