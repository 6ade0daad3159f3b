import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { openEventStream } from '../../support/event-stream-client.js';
import { createPet } from '../../support/pets-api.js';
import { eventsAfter, type Order, placeOrder, WITHOUT_SWEEP } from '../../support/orders-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s',
};

describe.each(ENGINES)('order events in the feed, the stream and webhooks [%s]', (engine) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let manager: string;

  beforeAll(async () => {
    t = await startTestApp(engine, ENV, WITHOUT_SWEEP);
    await t.app.listen(0, '127.0.0.1');
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('streams each order change and its pet.updated, and a filtered webhook gets only its types', async () => {
    const hook = await t.request('POST', '/v1/webhooks', {
      key: manager,
      body: { url: receiver.url, events: ['order.completed', 'order.cancelled'] },
    });
    expect(hook.statusCode).toBe(201);
    const { secret } = hook.json<{ secret: string }>();
    const stream = await openEventStream(`${await t.app.getUrl()}/v1/events/stream`, {
      authorization: `Bearer ${t.key}`,
    });
    try {
      const [sold, kept] = await Promise.all(
        ['Rex', 'Bella'].map((name) => createPet(t, { name, categoryId: 1, status: 'available' })),
      );
      const [last] = (await eventsAfter(t)).slice(-1);
      const first = await placeOrder(t, { petId: sold.id });
      const second = await placeOrder(t, { petId: kept.id });
      const completed = (await t.request('POST', `/v1/orders/${first.id}/complete`)).json<Order>();
      const cancelled = (await t.request('POST', `/v1/orders/${second.id}/cancel`)).json<Order>();

      const feed = await eventsAfter(t, last.id);
      expect(feed.map(({ type }) => type)).toEqual([
        'order.created',
        'pet.updated',
        'order.created',
        'pet.updated',
        'order.completed',
        'pet.updated',
        'order.cancelled',
        'pet.updated',
      ]);
      expect(feed[4].data).toEqual({ order: completed });
      expect(feed[6].data).toEqual({ order: cancelled });

      const streamed = (await stream.events(10, 5_000)).slice(2);
      expect(streamed.map(({ id, event }) => ({ id, event }))).toEqual(
        feed.map(({ id, type }) => ({ id, event: type })),
      );
      expect(streamed.map(({ data }) => JSON.parse(data!) as unknown)).toEqual(feed);

      await receiver.waitFor(2);
      const delivered = receiver.received.map((delivery) =>
        new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>),
      );
      expect(delivered).toEqual([feed[4], feed[6]]);
    } finally {
      stream.close();
    }
  });

  it('stores each event of an order as the JSON text JSON.stringify writes, whatever the pet is named', async () => {
    const name = 'Rex "the\\one"\n\t\u0001\u001f\u007f é 🐕 \u2028 </script>';
    const [sold, kept] = await Promise.all(
      [name, `${name}2`].map((n) => createPet(t, { name: n, categoryId: 1, status: 'available' })),
    );
    const first = await placeOrder(t, { petId: sold.id });
    const second = await placeOrder(t, { petId: kept.id });
    const completed = (await t.request('POST', `/v1/orders/${first.id}/complete`)).json<Order>();
    const cancelled = (await t.request('POST', `/v1/orders/${second.id}/cancel`)).json<Order>();

    const stored = await t.dataSource.query<{ type: string; pet: string; previous: string }[]>(
      `SELECT type, pet, previous FROM pet_events WHERE pet_id IN (${sold.id}, ${kept.id})
      AND type <> 'pet.created' ORDER BY seq`,
    );
    const pet = ({ id, name }: { id: number; name: string }, status: string) =>
      JSON.stringify({ id, name, categoryId: 1, status });
    const was = (status: string) => JSON.stringify({ status });
    expect(stored).toEqual([
      { type: 'order.created', pet: JSON.stringify(first), previous: null },
      { type: 'pet.updated', pet: pet(sold, 'pending'), previous: was('available') },
      { type: 'order.created', pet: JSON.stringify(second), previous: null },
      { type: 'pet.updated', pet: pet(kept, 'pending'), previous: was('available') },
      { type: 'order.completed', pet: JSON.stringify(completed), previous: null },
      { type: 'pet.updated', pet: pet(sold, 'sold'), previous: was('pending') },
      { type: 'order.cancelled', pet: JSON.stringify(cancelled), previous: null },
      { type: 'pet.updated', pet: pet(kept, 'available'), previous: was('pending') },
    ]);
  });
});
