import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, runApiKeyCli, startDevServer } from '../../support/processes.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

describe('webhook secrets in the server log (node dist/main.js)', () => {
  let dev: DevServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dev = await startDevServer({
      LOG_LEVEL: 'trace',
      WEBHOOK_RETRY_SCHEDULE: '0s,1s',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await dev?.stop();
  });

  it('never logs a secret: not on create, rotate, get, nor on failed deliveries', async () => {
    const created = await runApiKeyCli(
      ['create', 'hooks', '--scopes', 'pets:write,webhooks:manage'],
      `sqlite:${dev.databasePath}`,
    );
    const key = created.stdout.trim();
    const call = async (method: string, path: string, body?: object) =>
      fetch(`${dev.server.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body && { body: JSON.stringify(body) }),
      });
    receiver.answer = () => ({ status: 500 });

    const webhook = (await (await call('POST', '/v1/webhooks', { url: receiver.url })).json()) as {
      id: number;
      secret: string;
    };
    const rotated = (await (
      await call('POST', `/v1/webhooks/${webhook.id}/rotate-secret`)
    ).json()) as { secret: string };
    expect((await call('GET', `/v1/webhooks/${webhook.id}`)).status).toBe(200);
    expect((await call('POST', '/v1/pets', { name: 'Rex', categoryId: 1 })).status).toBe(201);
    await receiver.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const log = dev.server.output();
    expect(log).toContain(`"route":"/v1/webhooks"`);
    for (const secret of [webhook.secret, rotated.secret]) {
      expect(log).not.toContain(secret);
      expect(log).not.toContain(secret.slice('whsec_'.length));
    }
    expect(log).not.toContain('whsec_');
  });
});
