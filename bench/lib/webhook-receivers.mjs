// Webhook receivers for --webhooks (docs/events.md, "Webhooks"): plain HTTP servers on loopback
// that answer every delivery 204 at once, as a receiver that queues the work does, and the
// subscriptions that point the service at them. Used by the workers that run pinned to CPU 1.
import { createServer } from 'node:http';
import { once } from 'node:events';

/**
 * Starts `count` receivers on free loopback ports. `onDelivery(receiver, event)` is called with
 * each delivery's parsed body.
 * @returns {Promise<{urls: string[], close: () => Promise<void>}>}
 */
export async function startReceivers(count, onDelivery) {
  const servers = await Promise.all(
    Array.from({ length: count }, async (_, receiver) => {
      const server = createServer((request, response) => {
        const chunks = [];
        request.on('data', (chunk) => chunks.push(chunk));
        request.on('end', () => {
          response.writeHead(204).end();
          onDelivery(receiver, JSON.parse(Buffer.concat(chunks).toString()));
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return server;
    }),
  );
  return {
    urls: servers.map((server) => `http://127.0.0.1:${server.address().port}/hook`),
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/** Subscribes each URL to every event type, through the API; resolves to the webhooks' ids. */
export async function subscribe(origin, key, urls) {
  const ids = [];
  for (const url of urls) {
    const response = await fetch(`${origin}/v1/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    const body = await response.json();
    if (response.status !== 201)
      throw new Error(`POST /v1/webhooks answered ${response.status}: ${JSON.stringify(body)}`);
    ids.push(body.id);
  }
  return ids;
}

/** The deliveries each webhook still owes, as GET /v1/webhooks reports them. */
export async function pendingDeliveries(origin, key) {
  const response = await fetch(`${origin}/v1/webhooks`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  if (response.status !== 200) throw new Error(`GET /v1/webhooks answered ${response.status}`);
  return (await response.json()).map((webhook) => webhook.pendingDeliveries);
}
