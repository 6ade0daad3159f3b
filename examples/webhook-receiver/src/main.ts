// Runs the webhook receiver: POST /webhooks/animal-store on PORT (default 4000), verifying with
// WEBHOOK_SECRET and, while a rotation settles, WEBHOOK_PREVIOUS_SECRET; SIGTERM or SIGINT stops it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryVerifier } from './delivery-verifier.js';
import { handlePetEvent } from './pet-event-handler.js';
import { webhookReceiver, WEBHOOK_PATH } from './receiver.js';
import { RecentIds } from './recent-ids.js';

const DEFAULT_PORT = 4000;
/** How many handled ids to remember; ids are at most 64 characters, so about a megabyte. */
const REMEMBERED_IDS = 10_000;
/** How long requests under way may take to finish once stopping; the store waits 15 s by default. */
const STOP_GRACE_MS = 15_000;

const server = createServer(
  webhookReceiver({
    verifier: verifierFromEnvironment(),
    handled: new RecentIds(REMEMBERED_IDS),
    handle: handlePetEvent,
  }),
);
// HOST unset: every interface, since the store's servers call the receiver from elsewhere.
server.listen(Number(process.env.PORT ?? DEFAULT_PORT), process.env.HOST, () =>
  console.log(`webhook receiver listening on ${urlOf(server)}`),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop(server));

/** The verifier for WEBHOOK_SECRET and WEBHOOK_PREVIOUS_SECRET; exits 2 when they are unusable. */
function verifierFromEnvironment(): DeliveryVerifier {
  const { WEBHOOK_SECRET: secret, WEBHOOK_PREVIOUS_SECRET: previousSecret } = process.env;
  if (!secret) {
    console.error(
      "Set WEBHOOK_SECRET to the subscription's secret (whsec_…), which POST /v1/webhooks answers once.",
    );
    process.exit(2);
  }
  try {
    return new DeliveryVerifier(previousSecret ? [secret, previousSecret] : [secret]);
  } catch (error) {
    console.error(
      `WEBHOOK_SECRET and WEBHOOK_PREVIOUS_SECRET take secrets as the store gives them (whsec_…): ${(error as Error).message}`,
    );
    process.exit(2);
  }
}

/** Stops taking connections and exits (status 0) once the requests under way are answered. */
function stop(server: Server): void {
  server.close(() => console.log('webhook receiver stopped'));
  setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS).unref();
}

function urlOf(server: Server): string {
  const { address, family, port } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return `http://${host}:${port}${WEBHOOK_PATH}`;
}
