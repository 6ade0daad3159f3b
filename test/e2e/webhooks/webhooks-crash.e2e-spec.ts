import { afterEach, describe, expect, it } from 'vitest';
import { runApiKeyCli, type ServerProcess, startServer } from '../../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const PETS = 10;
/** An attempt takes this long, so the kill finds one in flight and more owed. */
const ANSWER_MS = 300;

describe.each(ENGINES)('webhooks through a kill -9 [%s]', (engine) => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  const servers: ServerProcess[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) server.child.kill('SIGKILL');
    await receiver?.close();
    await database?.drop();
  });

  it('delivers every event after a restart: none lost, and only what arrived before the kill sent again', async () => {
    database = await createTestDatabase(engine);
    receiver = await WebhookReceiver.start();
    receiver.answer = () => ({ status: 200, delayMs: ANSWER_MS });
    const key = (
      await runApiKeyCli(
        ['create', 'hooks', '--scopes', 'pets:read,pets:write,webhooks:manage'],
        database.url,
      )
    ).stdout.trim();
    const start = async () => {
      const server = await startServer({
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        DATABASE_URL: database.url,
        RATE_LIMIT_PER_MINUTE: '0',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      });
      servers.push(server);
      return (path: string, body?: object) =>
        fetch(`${server.baseUrl}${path}`, {
          method: body ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body && { body: JSON.stringify(body) }),
        });
    };

    const first = await start();
    expect((await first('/v1/webhooks', { url: receiver.url })).status).toBe(201);
    for (let i = 0; i < PETS; i++)
      expect((await first('/v1/pets', { name: `p${i}`, categoryId: 1 })).status).toBe(201);
    await receiver.waitFor(2);
    const killed = servers.shift()!;
    killed.child.kill('SIGKILL');
    await killed.exited;
    const arrivedBeforeKill = [...receiver.ids];

    const second = await start();
    const feed = ((await (await second('/v1/events?limit=100')).json()) as { id: string }[]).map(
      ({ id }) => id,
    );
    expect(feed).toHaveLength(PETS);
    // The killed instance's lease runs out first: WEBHOOK_TIMEOUT_MS + 10 s.
    const deadline = Date.now() + 30_000;
    while (!feed.every((id) => receiver.ids.includes(id)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));

    const firstSeen = [...new Set(receiver.ids)];
    expect(firstSeen).toEqual(feed);
    // Sent again: only what arrived before the kill (the attempt in flight, and the successes
    // of its batch not yet recorded), each at most once more.
    const again = receiver.ids.slice(arrivedBeforeKill.length);
    expect(again.filter((id) => arrivedBeforeKill.includes(id)).length).toBe(
      receiver.ids.length - firstSeen.length,
    );
    expect(new Set(again).size).toBe(again.length);
  }, 60_000);
});
