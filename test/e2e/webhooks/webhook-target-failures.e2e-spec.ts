import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { createPet } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';
import { REFUSING_URL } from '../../support/webhook-receiver.js';

/**
 * The production target rules (WEBHOOK_ALLOW_PRIVATE_TARGETS unset), one attempt per delivery.
 */
const ENV = { RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_RETRY_SCHEDULE: '0s' };

/** What a client reads of a webhook, less what names it and when its attempt happened to end. */
function outcomeOf(webhook: Record<string, unknown>): string {
  const { id: _id, url: _url, createdAt: _created, lastFailureAt, ...outcome } = webhook;
  expect(lastFailureAt).toEqual(expect.any(String));
  return JSON.stringify(outcome);
}

/**
 * A key with webhooks:manage learns nothing of the store's network from a webhook's failures
 * (docs/security.md, "Webhook targets (SSRF)"): a host name that resolves to a non-public
 * address and one that does not resolve at all fail alike, in every field a client reads, and
 * are stored alike. No traffic leaves: the refusal comes before any connection.
 */
describe.each(ENGINES)('webhooks to hosts without a public address [%s]', (engine) => {
  let t: TestApp;
  let manager: string;

  beforeAll(async () => {
    t = await startTestApp(engine, ENV);
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
  });
  afterAll(() => t?.close());

  const subscribe = async (url: string): Promise<number> => {
    const created = await t.request('POST', '/v1/webhooks', { key: manager, body: { url } });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ id: number }>().id;
  };
  const webhook = async (id: number) => {
    const answer = await t.request('GET', `/v1/webhooks/${id}`, { key: manager });
    expect(answer.statusCode).toBe(200);
    return answer.json<Record<string, unknown>>();
  };

  it('fails a name that resolves to loopback and a name that does not resolve with one reason', async () => {
    // A public-looking name when registered, whose DNS then answers with loopback (rebinding):
    // stored as localhost, which the create would refuse by name. Nothing listens on its port.
    const internal = await subscribe('https://rebinding.example/hook');
    const { port } = new URL(REFUSING_URL);
    await t.dataSource.query(
      `UPDATE webhook_subscriptions SET url = 'https://localhost:${port}/hook' WHERE id = ${internal}`,
    );
    const unresolved = await subscribe('https://nothing.invalid/hook');

    await createPet(t, { name: 'Rex', categoryId: 1 });
    await vi.waitFor(
      async () => {
        for (const id of [internal, unresolved])
          expect(await webhook(id)).toMatchObject({ givenUpDeliveries: 1 });
      },
      { timeout: 10_000, interval: 50 },
    );

    const expected = JSON.stringify({
      events: null,
      disabled: false,
      lastSuccessAt: null,
      lastFailureReason: 'host not found or not public; given up after 1 attempt',
      pendingDeliveries: 0,
      givenUpDeliveries: 1,
    });
    const resolvedPrivately = outcomeOf(await webhook(internal));
    expect(resolvedPrivately).toBe(outcomeOf(await webhook(unresolved)));
    expect(resolvedPrivately).toBe(expected);
    const listed = (await t.request('GET', '/v1/webhooks', { key: manager })).json<
      Record<string, unknown>[]
    >();
    expect(listed.map(outcomeOf)).toEqual([expected, expected]);

    const stored = await t.dataSource.query<Record<string, unknown>[]>(
      `SELECT subscription_id, state, attempts, last_status, last_error FROM webhook_deliveries
      ORDER BY subscription_id`,
    );
    expect(stored.map(({ subscription_id, ...row }) => [Number(subscription_id), row])).toEqual(
      [internal, unresolved].map((id) => [
        id,
        {
          state: 'given_up',
          attempts: 1,
          last_status: null,
          last_error: 'host not found or not public',
        },
      ]),
    );
  });
});
