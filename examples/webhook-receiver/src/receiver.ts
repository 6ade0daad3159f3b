import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { WebhookVerificationError } from 'standardwebhooks';
import type { DeliveryVerifier, StoreEvent, VerifiedDelivery } from './delivery-verifier.js';
import type { RecentIds } from './recent-ids.js';

export const WEBHOOK_PATH = '/webhooks/animal-store';
/** Far above any event (a pet's name is at most 255 characters); bounds what one request costs. */
const MAX_BODY_BYTES = 64 * 1024;

export interface ReceiverOptions {
  verifier: DeliveryVerifier;
  /** The ids of deliveries already handled. */
  handled: RecentIds;
  /** Called once per new event; a throw answers 500, so the store delivers it again later. */
  handle: (event: StoreEvent) => void | Promise<void>;
}

/**
 * Answers `POST /webhooks/animal-store`: 204 for a delivery whose signature matched, once its event
 * is handled (or was before); 400 for one that is not signed by the store or not recently. Never
 * 410: to the store a 410 means "this endpoint is gone" and disables the subscription.
 */
export function webhookReceiver(options: ReceiverOptions): RequestListener {
  return (request, response) => {
    receive(request, response, options).catch((error: unknown) => {
      console.error('handling a delivery failed:', error);
      answer(response, 500);
    });
  };
}

async function receive(
  request: IncomingMessage,
  response: ServerResponse,
  { verifier, handled, handle }: ReceiverOptions,
): Promise<void> {
  if (new URL(request.url ?? '/', 'http://receiver').pathname !== WEBHOOK_PATH)
    return answer(response, 404);
  if (request.method !== 'POST') return answer(response, 405, { allow: 'POST' });
  // The signature covers the exact bytes sent: verify them before anything parses the body.
  const body = await readBody(request);
  if (body === undefined) return answer(response, 413);

  const delivery = verifyDelivery(verifier, body, request);
  if (delivery === undefined) return answer(response, 400);

  // Deliveries are at least once: a retry after a lost answer carries the same webhook-id.
  if (handled.has(delivery.id)) {
    console.log(`duplicate ${delivery.id} ignored`);
    return answer(response, 204);
  }
  await handle(delivery.event);
  handled.add(delivery.id);
  answer(response, 204);
}

/** The delivery; undefined, and logged, when no signature matches or it was not signed recently. */
function verifyDelivery(
  verifier: DeliveryVerifier,
  body: Buffer,
  request: IncomingMessage,
): VerifiedDelivery | undefined {
  try {
    return verifier.verify(body, request.headers);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    // Quoted: the id is whatever the sender wrote.
    const id = JSON.stringify(request.headers['webhook-id'] ?? null);
    console.warn(`rejected ${id}: ${error.message}`);
    return undefined;
  }
}

/** The body's bytes; undefined when it is larger than MAX_BODY_BYTES (the rest is read, not kept). */
async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined;
}

function answer(response: ServerResponse, status: number, headers: Record<string, string> = {}) {
  response.writeHead(status, headers).end();
}
