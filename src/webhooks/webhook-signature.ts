import { Webhook } from 'standardwebhooks';

/** The secrets that sign a delivery: the current one, and the previous during its overlap. */
export interface SigningSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** Signs a delivery sent at `now`: its Standard Webhooks headers. */
export type DeliverySigner = (messageId: string, now: Date, body: string) => Record<string, string>;

/**
 * A signer for `secrets` as read: `webhook-signature` has a `v1,…` signature by each secret still
 * signing, space separated, so a receiver verifies with either while a rotation is rolled out
 * (docs/events.md, "Webhooks"). Each secret is decoded once, here, not per delivery.
 */
export function deliverySigner(secrets: SigningSecrets): DeliverySigner {
  const current = new Webhook(secrets.secret);
  const previous =
    secrets.previousSecret === null ? undefined : new Webhook(secrets.previousSecret);
  return (messageId, now, body) => {
    const signing =
      previous && secrets.previousSecretExpiresAt! > now ? [current, previous] : [current];
    return {
      'content-type': 'application/json',
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signing.map((webhook) => webhook.sign(messageId, now, body)).join(' '),
    };
  };
}

/** The headers of one delivery: deliverySigner's, for a single message. */
export function signedHeaders(
  secrets: SigningSecrets,
  messageId: string,
  now: Date,
  body: string,
): Record<string, string> {
  return deliverySigner(secrets)(messageId, now, body);
}
