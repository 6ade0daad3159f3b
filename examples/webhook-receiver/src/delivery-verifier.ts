import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components } from '../../client/src/api-schema.js';

/** A delivered event: about a pet or about a category's name, as its `type` says. */
export type StoreEvent = components['schemas']['PetEvent'] | components['schemas']['CategoryEvent'];

/** A delivery whose signature matched: its `webhook-id` (the event's id) and its event. */
export interface VerifiedDelivery {
  id: string;
  event: StoreEvent;
}

/** The Standard Webhooks headers the signature covers or is. */
const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * Checks deliveries against the subscription's secret and, while it is being rotated, the previous
 * one. `Webhook.verify` accepts a delivery when any of its space-separated signatures is by its one
 * secret, so accepting either secret means trying each.
 */
export class DeliveryVerifier {
  private readonly webhooks: Webhook[];

  /** `secrets`: the `whsec_…` secrets to accept, current first. */
  constructor(secrets: string[]) {
    this.webhooks = secrets.map((secret) => new Webhook(secret));
  }

  /**
   * The delivery, once a signature over its exact body bytes matches and its `webhook-timestamp`
   * is within the package's tolerance (5 minutes) of now. Throws `WebhookVerificationError`,
   * with the current secret's reason, when none matches.
   */
  verify(body: Buffer, headers: IncomingHttpHeaders): VerifiedDelivery {
    const signed = signatureHeaders(headers);
    let failure: unknown;
    for (const webhook of this.webhooks) {
      try {
        // The signature proves the store sent this body, so it is the event docs/events.md defines.
        const event = webhook.verify(body, signed) as StoreEvent;
        return { id: signed['webhook-id'], event };
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        failure ??= error;
      }
    }
    throw failure;
  }
}

/** The signature headers that are present; `Webhook.verify` refuses the delivery without all three. */
function signatureHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const present = SIGNATURE_HEADERS.flatMap((name) => {
    const value = headers[name];
    return typeof value === 'string' ? [[name, value] as const] : [];
  });
  return Object.fromEntries(present);
}
