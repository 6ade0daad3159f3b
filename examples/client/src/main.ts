// Runs the example against a running service; as `catalogue`, names a category, lists it and
// counts the stock; as `follow <cursor-file>`, follows its change feed until SIGINT or SIGTERM;
// as `till <petId>`, sells an animal; as `webhooks …`, manages the webhooks. ANIMAL_STORE_API_KEY
// is required; ANIMAL_STORE_URL defaults to the local server that `npm start` runs.
import { runCatalogueExample } from './catalogue.js';
import { CursorExpiredError, followEvents, type StoreEvent } from './event-feed.js';
import {
  AnimalStoreError,
  createAnimalStoreClient,
  describePet,
  explainError,
  runExample,
  type AnimalStoreClient,
} from './example.js';
import { runTill } from './till.js';
import { runWebhookCommand, WEBHOOK_USAGE } from './webhooks.js';

const DEFAULT_URL = 'http://127.0.0.1:3000/v1';
const COMMAND = 'npm run client:example';
const USAGE = ['', 'catalogue', 'follow <cursor-file>', 'till <petId>', ...WEBHOOK_USAGE]
  .map((form) => `Usage: ${form === '' ? COMMAND : `${COMMAND} -- ${form}`}`)
  .join('\n');

const apiKey = process.env.ANIMAL_STORE_API_KEY;
if (!apiKey) {
  console.error(
    'Set ANIMAL_STORE_API_KEY to an API key (npm start prints one on its first start).',
  );
  process.exit(2);
}
const baseUrl = process.env.ANIMAL_STORE_URL ?? DEFAULT_URL;
const [command, ...args] = process.argv.slice(2);

try {
  if (command === undefined) {
    await runExample({ baseUrl, apiKey, log: (line) => console.log(line) });
  } else if (command === 'catalogue' && args.length === 0) {
    await runCatalogueExample({ baseUrl, apiKey, log: (line) => console.log(line) });
  } else if (command === 'follow' && args.length === 1) {
    await followToConsole(createAnimalStoreClient(baseUrl, apiKey), args[0]);
  } else if (command === 'till' && args.length === 1 && /^[1-9]\d{0,15}$/.test(args[0])) {
    for (const line of await runTill(createAnimalStoreClient(baseUrl, apiKey), Number(args[0])))
      console.log(line);
  } else if (command === 'webhooks') {
    const lines = await runWebhookCommand(createAnimalStoreClient(baseUrl, apiKey), args);
    if (lines === undefined) usageError();
    else for (const line of lines) console.log(line);
  } else {
    usageError();
  }
} catch (error) {
  if (!(error instanceof AnimalStoreError)) throw error;
  console.error(error instanceof CursorExpiredError ? error.message : explainError(error.body));
  process.exitCode = 1;
}

function usageError(): void {
  console.error(USAGE);
  process.exitCode = 2;
}

/** Prints each event of the feed as it comes; a signal stops it with the position saved. */
async function followToConsole(client: AnimalStoreClient, file: string): Promise<void> {
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  await followEvents(client, {
    cursorFile: file,
    signal: stop.signal,
    handle: (event) => console.log(describeEvent(event)),
  });
}

function describeEvent({ id, type, data }: StoreEvent): string {
  if ('order' in data) {
    const { order } = data;
    return `${id} ${type} order ${order.id} of pet ${order.petId}: ${order.status}`;
  }
  const subject =
    'pet' in data ? describePet(data.pet) : `category ${data.category.id} "${data.category.name}"`;
  return `${id} ${type} ${subject}`;
}
