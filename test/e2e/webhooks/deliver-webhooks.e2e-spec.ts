import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { WebhookDeliveryWorker } from '../../../src/webhooks/webhook-delivery-worker.js';
import { createPet } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';
import {
  type ReceivedDelivery,
  REFUSING_URL,
  WebhookReceiver,
} from '../../support/webhook-receiver.js';

/**
 * Short retries, so a test sees every attempt of a delivery: 3 attempts, 1 s apart; the receiver
 * is on loopback.
 */
const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '2000',
};

interface Created {
  id: number;
  secret: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The event a delivery carries, after its signature checks out with `secret`. */
function verified(secret: string, delivery: ReceivedDelivery): unknown {
  return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
}

describe.each(ENGINES)('webhook deliveries [%s]', (engine) => {
  let t: TestApp;
  let manager: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(engine, ENV);
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM webhook_deliveries');
    await t.dataSource.query('DELETE FROM webhook_subscriptions');
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => receiver.close());

  const subscribe = async (body: object = {}): Promise<Created> => {
    const created = await t.request('POST', '/v1/webhooks', {
      key: manager,
      body: { url: receiver.url, ...body },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json();
  };
  const webhook = async (id: number) =>
    (await t.request('GET', `/v1/webhooks/${id}`, { key: manager })).json();
  const sell = (id: number) =>
    t.request('PATCH', `/v1/pets/${id}`, {
      body: { status: 'sold' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
  /** The feed's events from `after` on: what the deliveries must carry. */
  const feed = async (count: number) => {
    const events = (await t.request('GET', '/v1/events?limit=100')).json<{ id: string }[]>();
    return events.slice(-count);
  };

  it('delivers pet.created and pet.updated, signed as Standard Webhooks says, in event order', async () => {
    const { id, secret } = await subscribe();
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    await sell(pet.id);
    await receiver.waitFor(2);

    const events = await feed(2);
    expect(receiver.received.map((delivery) => verified(secret, delivery))).toEqual(events);
    for (const [index, delivery] of receiver.received.entries()) {
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['webhook-id']).toBe(events[index].id);
      expect(Number(delivery.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(delivery.body).toBe(JSON.stringify(events[index]));
    }
    expect(events.map((event) => (event as { type?: string }).type)).toEqual([
      'pet.created',
      'pet.updated',
    ]);
    await sleep(200);
    expect(await webhook(id)).toMatchObject({
      disabled: false,
      lastSuccessAt: expect.any(String),
      lastFailureAt: null,
      pendingDeliveries: 0,
      givenUpDeliveries: 0,
    });
  });

  it('sends nothing from before the webhook was created', async () => {
    await createPet(t, { name: 'Before', categoryId: 1 });
    await subscribe();
    const after = await createPet(t, { name: 'After', categoryId: 1 });
    await receiver.waitFor(1);
    await sleep(1_200);
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0].body).data.pet.id).toBe(after.id);
  });

  it('sends only the event types named in events', async () => {
    const { secret } = await subscribe({ events: ['pet.updated'] });
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    await sell(pet.id);
    await receiver.waitFor(1);
    await sleep(1_200);
    expect(receiver.received.map((delivery) => verified(secret, delivery))).toEqual([
      expect.objectContaining({ type: 'pet.updated' }),
    ]);
  });

  it('retries a 500 with the same webhook-id on the schedule, and records the failure', async () => {
    receiver.answer = (_delivery, index) => ({ status: index === 0 ? 500 : 204 });
    const { id, secret } = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(2);

    const [first, retry] = receiver.received;
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verified(secret, retry)).toEqual(verified(secret, first));
    // The schedule's second delay, 1 s less its 10 % jitter.
    expect(retry.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(900);
    await sleep(200);
    expect(await webhook(id)).toMatchObject({
      lastSuccessAt: expect.any(String),
      lastFailureAt: expect.any(String),
      lastFailureReason: 'HTTP 500',
      pendingDeliveries: 0,
      givenUpDeliveries: 0,
    });
  });

  it("waits a 503's Retry-After when it is longer than the schedule's delay", async () => {
    receiver.answer = (_delivery, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '3' } } : { status: 200 };
    await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(2);
    const [first, retry] = receiver.received;
    expect(retry.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(2_900);
  });

  it('disables the webhook on 410 and sends it nothing more', async () => {
    receiver.answer = () => ({ status: 410 });
    const { id } = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);
    await createPet(t, { name: 'Max', categoryId: 1 });
    await sleep(2_500);
    expect(receiver.received).toHaveLength(1);
    expect(await webhook(id)).toMatchObject({
      disabled: true,
      lastSuccessAt: null,
      lastFailureAt: expect.any(String),
      lastFailureReason: 'HTTP 410: the receiver asked for no more deliveries',
    });
  });

  it('gives up after the last attempt and shows it in the webhook', async () => {
    receiver.answer = () => ({ status: 500 });
    const { id } = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(3);
    await sleep(1_500);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.ids).size).toBe(1);
    expect(await webhook(id)).toMatchObject({
      disabled: false,
      lastSuccessAt: null,
      lastFailureReason: 'HTTP 500; given up after 3 attempts',
      pendingDeliveries: 0,
      givenUpDeliveries: 1,
    });
  });

  it('counts a receiver that does not answer within WEBHOOK_TIMEOUT_MS as failed, and retries', async () => {
    receiver.answer = (_delivery, index) => ({ status: 200, delayMs: index === 0 ? 3_000 : 0 });
    const { id } = await subscribe();
    await createPet(t, { name: 'Slow', categoryId: 1 });
    await receiver.waitFor(2, 8_000);
    expect(new Set(receiver.ids).size).toBe(1);
    expect(await webhook(id)).toMatchObject({
      lastFailureReason: 'timeout: no answer within 2000 ms',
    });
  });

  it('sends nothing more once the webhook is deleted', async () => {
    receiver.answer = () => ({ status: 500 });
    const { id } = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);
    expect((await t.request('DELETE', `/v1/webhooks/${id}`, { key: manager })).statusCode).toBe(
      204,
    );
    await sleep(2_500);
    expect(receiver.received).toHaveLength(1);
  });

  it('signs with both secrets for 24 h after a rotation: either verifies', async () => {
    const { id, secret: previous } = await subscribe();
    const rotated = await t.request('POST', `/v1/webhooks/${id}/rotate-secret`, { key: manager });
    const { secret } = rotated.json();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);
    const [delivery] = receiver.received;
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(secret, delivery)).toEqual(verified(previous, delivery));
  });

  it('delivers in event order, and a failing event does not hold later ones back', async () => {
    receiver.answer = (_delivery, index) => ({ status: index === 0 ? 500 : 200 });
    await subscribe();
    const pets = [];
    for (let i = 0; i < 5; i++) pets.push(await createPet(t, { name: `p${i}`, categoryId: 1 }));
    await receiver.waitFor(6);
    const order = (await feed(5)).map(({ id }) => id);
    // The first event failed once; the other four went on in order, then its retry came.
    expect(receiver.ids).toEqual([order[0], ...order.slice(1), order[0]]);
  });

  it('sends more events than a batch holds in event order, one full batch after another', async () => {
    await subscribe();
    // Committed together, so a pass finds two full batches of 20 and then a short one.
    const occurredAt = new Date().toISOString();
    const values = Array.from(
      { length: 45 },
      (_, i) => `('pet.created', '${occurredAt}', ${i + 1}, '{"id":${i + 1},"name":"p"}')`,
    );
    await t.dataSource.query(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet) VALUES ${values.join(', ')}`,
    );
    t.app.get(WebhookDeliveryWorker).wake();
    await receiver.waitFor(45);
    expect(receiver.ids).toEqual((await feed(45)).map(({ id }) => id));
  });

  it('gives every webhook its turn while commits keep coming, past the 8 an instance sends for at once', async () => {
    const receivers = await Promise.all(Array.from({ length: 12 }, () => WebhookReceiver.start()));
    try {
      for (const { url } of receivers) {
        const created = await t.request('POST', '/v1/webhooks', { key: manager, body: { url } });
        expect(created.statusCode, created.body).toBe(201);
      }
      for (let i = 0; i < 30; i++) {
        await createPet(t, { name: `p${i}`, categoryId: 1 });
        await sleep(20);
      }
      expect(receivers.map((each) => each.received.length > 0)).toEqual(Array(12).fill(true));
    } finally {
      await Promise.all(receivers.map((each) => each.close()));
    }
  });

  it('keeps a delivery row only while an event waits for its retry', async () => {
    receiver.answer = (_delivery, index) => ({ status: index === 1 ? 500 : 204 });
    const { id } = await subscribe();
    for (let i = 0; i < 3; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    const rows = async () =>
      (
        await t.dataSource.query(
          'SELECT subscription_id, event_tx, event_seq, state, attempts, last_status FROM webhook_deliveries',
        )
      ).map((row: Record<string, unknown>) => ({
        subscription: Number(row.subscription_id),
        event: `${String(row.event_tx)}-${String(row.event_seq)}`,
        state: row.state,
        attempts: row.attempts,
        status: row.last_status,
      }));
    await receiver.waitFor(3);
    await sleep(200);
    const [, failed] = (await feed(3)).map((event) => event.id);
    // The two events delivered at the first attempt left no row; the retry is 1 s away.
    expect(await rows()).toEqual([
      { subscription: id, event: failed, state: 'pending', attempts: 1, status: 500 },
    ]);
    await receiver.waitFor(4);
    await sleep(200);
    expect(await rows()).toEqual([]);
  });

  it('while a receiver gives no answer, attempts one owed event at a time, at most once a second', async () => {
    const { id } = await subscribe({ url: REFUSING_URL });
    // Three events committed together before a pass reads them, so one batch would hold them all.
    const occurredAt = new Date().toISOString();
    const values = [1, 2, 3].map(
      (pet) =>
        `('pet.created', '${occurredAt}', ${pet}, '{"id":${pet},"name":"p","categoryId":1}')`,
    );
    await t.dataSource.query(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet) VALUES ${values.join(', ')}`,
    );
    const failed = async () =>
      Number(
        (
          await t.dataSource.query(
            `SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = ${id}`,
          )
        )[0].n,
      );
    t.app.get(WebhookDeliveryWorker).wake();

    let first = 0;
    for (let waited = 0; first === 0 && waited < 5_000; waited += 5) {
      await sleep(5);
      first = await failed();
    }
    // A batch that went on after the refusal would have recorded all three at once.
    expect(first).toBe(1);
    // Let go, it is not leased again for a second after its attempt, however often passes run.
    const letGo = async () =>
      (
        await t.dataSource.query(
          `SELECT s.leased_until, d.last_attempt_at FROM webhook_subscriptions s
          JOIN webhook_deliveries d ON d.subscription_id = s.id
          WHERE s.id = ${id} AND s.lease_owner IS NULL`,
        )
      )[0] as { leased_until: string | Date; last_attempt_at: string | Date } | undefined;
    let released = await letGo();
    for (let waited = 0; !released && waited < 5_000; waited += 5) {
      await sleep(5);
      released = await letGo();
    }
    const pause = new Date(released!.leased_until).getTime();
    expect(pause - new Date(released!.last_attempt_at).getTime()).toBeGreaterThanOrEqual(1_000);
    for (let waited = 0; (await failed()) < 3 && waited < 15_000; waited += 100) await sleep(100);
    expect(await failed()).toBe(3);
    expect(await webhook(id)).toMatchObject({ lastFailureReason: 'connection refused' });
  });

  it('records the retries of a batch together: delivered ones lose their row, the others are updated', async () => {
    const attempts = new Map<number, number>();
    // Per pet p0…p3: every first attempt fails; the second succeeds for p0 and p1; the third
    // succeeds for p2; p3 fails all three and is given up.
    const succeedsAt = [2, 2, 3, Infinity];
    receiver.answer = (delivery) => {
      // By name, known before the create answers (its commit may be delivered before that).
      const pet = Number(JSON.parse(delivery.body).data.pet.name.slice(1));
      const attempt = (attempts.get(pet) ?? 0) + 1;
      attempts.set(pet, attempt);
      return { status: attempt >= succeedsAt[pet] ? 204 : 500 };
    };
    const { id } = await subscribe();
    for (let i = 0; i < 4; i++) await createPet(t, { name: `p${i}`, categoryId: 1 });
    await receiver.waitFor(10);
    await sleep(300);

    expect(receiver.received).toHaveLength(10);
    expect([...attempts.entries()].sort()).toEqual([
      [0, 2],
      [1, 2],
      [2, 3],
      [3, 3],
    ]);
    const rows = await t.dataSource.query(
      `SELECT event_seq, state, attempts, last_status, next_attempt_at, last_attempt_at
      FROM webhook_deliveries WHERE subscription_id = ${id}`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'given_up', attempts: 3, last_status: 500 });
    // Given up, it keeps the time its last attempt was due, not the attempt's own.
    const dueAt = new Date(rows[0].next_attempt_at).getTime();
    expect(dueAt).toBeLessThan(new Date(rows[0].last_attempt_at).getTime());
    expect(await webhook(id)).toMatchObject({ pendingDeliveries: 0, givenUpDeliveries: 1 });
  });
});

describe.each(ENGINES)('webhook first attempts after a delay [%s]', (engine) => {
  let t: TestApp;
  let manager: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(engine, { ...ENV, WEBHOOK_RETRY_SCHEDULE: '2s,1s' });
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it("sends an event's first attempt the schedule's first delay after its commit", async () => {
    const created = await t.request('POST', '/v1/webhooks', {
      key: manager,
      body: { url: receiver.url },
    });
    expect(created.statusCode, created.body).toBe(201);
    const committedAt = Date.now();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await sleep(1_000);
    expect(receiver.received).toHaveLength(0);
    await receiver.waitFor(1);
    expect(receiver.received[0].receivedAt - committedAt).toBeGreaterThanOrEqual(2_000);
  });
});
