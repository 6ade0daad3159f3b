import type { components } from './api-schema.js';
import { failure, type AnimalStoreClient } from './example.js';

export type Webhook = components['schemas']['Webhook'];
export type NewWebhook = components['schemas']['NewWebhook'];
/** A webhook as created or rotated: the only answers that show its signing secret. */
export type WebhookWithSecret = components['schemas']['WebhookWithSecret'];

// Every call needs a key with the scope webhooks:manage, which `apikey create` gives only when
// `--scopes` names it.

/** Subscribes `webhook.url` to the events; keep the secret of the answer, it is not shown again. */
export async function createWebhook(
  client: AnimalStoreClient,
  webhook: NewWebhook,
): Promise<WebhookWithSecret> {
  const { data, error, response } = await client.POST('/webhooks', { body: webhook });
  if (data === undefined) throw failure('createWebhook', error, response);
  return data;
}

/** Every webhook of the store, oldest first, with the state of its deliveries. */
export async function listWebhooks(client: AnimalStoreClient): Promise<Webhook[]> {
  const { data, error, response } = await client.GET('/webhooks');
  if (data === undefined) throw failure('listWebhooks', error, response);
  return data;
}

export async function getWebhook(client: AnimalStoreClient, id: number): Promise<Webhook> {
  const { data, error, response } = await client.GET('/webhooks/{id}', {
    params: { path: { id } },
  });
  if (data === undefined) throw failure('getWebhook', error, response);
  return data;
}

/** Deletes the webhook and what it is still owed: nothing more is sent to it. */
export async function deleteWebhook(client: AnimalStoreClient, id: number): Promise<void> {
  const { error, response } = await client.DELETE('/webhooks/{id}', {
    params: { path: { id } },
  });
  // A 204 has no body, so openapi-fetch gives neither data nor error: the status tells.
  if (response.status !== 204) throw failure('deleteWebhook', error, response);
}

/**
 * Gives the webhook a new signing secret. For 24 hours deliveries are signed with both, so the
 * receiver can move to the new one without refusing any.
 */
export async function rotateWebhookSecret(
  client: AnimalStoreClient,
  id: number,
): Promise<WebhookWithSecret> {
  const { data, error, response } = await client.POST('/webhooks/{id}/rotate-secret', {
    params: { path: { id } },
  });
  if (data === undefined) throw failure('rotateWebhookSecret', error, response);
  return data;
}

/** One line about a webhook and its deliveries, for a person. */
export function describeWebhook(webhook: Webhook): string {
  const state = webhook.disabled ? 'disabled (answered 410)' : 'active';
  const failed =
    webhook.lastFailureReason === null ? '' : `, last failure: ${webhook.lastFailureReason}`;
  return (
    `#${webhook.id} ${webhook.url} ${describeEvents(webhook)} ${state}, ` +
    `${webhook.pendingDeliveries} pending, ${webhook.givenUpDeliveries} given up${failed}`
  );
}

/** The events a webhook takes: the listed types, or every type (`null`). */
export function describeEvents({ events }: Pick<Webhook, 'events'>): string {
  return events === null ? '[every event]' : `[${events.join(', ')}]`;
}

/** The webhook commands of main.ts, as `webhooks <command> [argument…]` runs them. */
export const WEBHOOK_USAGE = [
  'webhooks list',
  'webhooks get <id>',
  'webhooks create <url> [event-type…]',
  'webhooks rotate-secret <id>',
  'webhooks delete <id>',
];

/**
 * Runs one webhook command and returns the lines it prints; undefined when `args` is not one of
 * WEBHOOK_USAGE.
 */
export async function runWebhookCommand(
  client: AnimalStoreClient,
  args: string[],
): Promise<string[] | undefined> {
  const [command, argument, ...rest] = args;
  if (command === 'list' && argument === undefined)
    return (await listWebhooks(client)).map(describeWebhook);
  if (command === 'create' && argument !== undefined) {
    // The types are sent as typed: the API refuses an unknown one with a 400 that lists them.
    const events = rest.length === 0 ? undefined : (rest as NewWebhook['events']);
    const created = await createWebhook(client, { url: argument, events });
    return [
      `created #${created.id} ${created.url} ${describeEvents(created)}`,
      `secret ${created.secret} (shown only now: give it to the receiver)`,
    ];
  }
  const id = webhookId(argument);
  if (id === undefined || rest.length > 0) return undefined;
  switch (command) {
    case 'get':
      return [describeWebhook(await getWebhook(client, id))];
    case 'rotate-secret': {
      const rotated = await rotateWebhookSecret(client, id);
      return [
        `secret ${rotated.secret} (shown only now; the previous one also signs for 24 hours)`,
      ];
    }
    case 'delete':
      await deleteWebhook(client, id);
      return [`deleted #${id}`];
    default:
      return undefined;
  }
}

/** A webhook id as typed: digits only, so that "1e3" or "7abc" is a usage error, not a lookup. */
function webhookId(argument: string | undefined): number | undefined {
  return argument !== undefined && /^[1-9]\d{0,15}$/.test(argument) ? Number(argument) : undefined;
}
