import { Webhook } from 'standardwebhooks';

/** The secrets that sign a delivery: the current one, and the previous during its overlap. */
export interface SigningSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * The Standard Webhooks headers of a delivery sent at `now`: `webhook-signature` has a `v1,…`
 * signature by each secret still signing, space separated, so a receiver verifies with either
 * while a rotation is rolled out (docs/events.md, "Webhooks").
 */
export function signedHeaders(
  secrets: SigningSecrets,
  messageId: string,
  now: Date,
  body: string,
): Record<string, string> {
  const signing = [secrets.secret];
  if (secrets.previousSecret !== null && secrets.previousSecretExpiresAt! > now)
    signing.push(secrets.previousSecret);
  return {
    'content-type': 'application/json',
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signing
      .map((secret) => new Webhook(secret).sign(messageId, now, body))
      .join(' '),
  };
}
