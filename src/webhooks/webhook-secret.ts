import { randomBytes } from 'node:crypto';

/** The prefix Standard Webhooks gives a signing secret; the rest is base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret (docs/events.md, "Webhooks"): `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** After a rotation the previous secret still signs deliveries for this long. */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 3_600_000;
