import { resolve } from 'node:path';

const RUN_BUNDLED = resolve('examples/scripts/run-bundled.mjs');

/** The arguments of `node` that run the typed client's command, as `npm run client:example` does. */
export const CLIENT_COMMAND = [RUN_BUNDLED, 'examples/client/src/main.ts', 'client'];

/** The arguments of `node` that run the webhook receiver, as `npm run webhook-receiver:example` does. */
export const WEBHOOK_RECEIVER_COMMAND = [
  RUN_BUNDLED,
  'examples/webhook-receiver/src/main.ts',
  'webhook-receiver',
];
