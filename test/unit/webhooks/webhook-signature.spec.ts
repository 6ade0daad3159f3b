import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signedHeaders } from '../../../src/webhooks/webhook-signature.js';

const CURRENT = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/ZPh7tY2Vp8=';
const PREVIOUS = 'whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY=';
const NOW = new Date('2026-11-25T12:00:00.500Z');
const BODY = '{"id":"0-1","type":"pet.created"}';

const secrets = (previousSecretExpiresAt: Date | null) => ({
  secret: CURRENT,
  previousSecret: previousSecretExpiresAt && PREVIOUS,
  previousSecretExpiresAt,
});

describe('signedHeaders', () => {
  it('names the message, the second it was signed, the body type, and signs with the secret', () => {
    const headers = signedHeaders(secrets(null), '0-1', NOW, BODY);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'webhook-id': '0-1',
      'webhook-timestamp': String(Math.floor(NOW.getTime() / 1000)),
      'webhook-signature': new Webhook(CURRENT).sign('0-1', NOW, BODY),
    });
  });

  it('adds the previous secret’s signature until its overlap ends, then drops it', () => {
    const during = signedHeaders(secrets(new Date(NOW.getTime() + 1)), '0-1', NOW, BODY);
    expect(during['webhook-signature']).toBe(
      `${new Webhook(CURRENT).sign('0-1', NOW, BODY)} ${new Webhook(PREVIOUS).sign('0-1', NOW, BODY)}`,
    );
    const after = signedHeaders(secrets(NOW), '0-1', NOW, BODY);
    expect(after['webhook-signature'].split(' ')).toHaveLength(1);
  });
});
