import type { OperationObject, ParameterObject } from '@nestjs/swagger';
import { EVENT_SCHEMA } from '../../events/dto/pet-event.dto.js';
import { signedHeaders } from '../webhook-signature.js';
import { WEBHOOK_PROPERTIES } from './webhook-properties.js';

const DELIVERY_DESCRIPTION =
  "One event, POSTed to the webhook's `url` as Standard Webhooks 1.0 describes: the body is the event JSON, exactly as the feed serves it (`Content-Type: application/json`), signed with the webhook's secret. Verify the signature on the body exactly as received, before parsing it (the `standardwebhooks` package does), and answer 2xx within `WEBHOOK_TIMEOUT_MS` (15 s by default), then do the work. A delivery can arrive more than once: deduplicate by `webhook-id`. Redirects are not followed.";

const DELIVERY_EXAMPLE = {
  id: '7301-42',
  type: 'pet.updated',
  timestamp: '2026-11-25T18:04:05.123Z',
  data: {
    pet: { id: 42, name: 'Rex', categoryId: 1, status: 'sold' },
    previous: { status: 'available' },
  },
};

/**
 * The headers of the example: really signed, with the example secret of WebhookWithSecret over the
 * example body as compact JSON, so a verifier can be tried on them.
 */
const EXAMPLE_HEADERS = signedHeaders(
  {
    secret: WEBHOOK_PROPERTIES.secret.example,
    previousSecret: null,
    previousSecretExpiresAt: null,
  },
  DELIVERY_EXAMPLE.id,
  new Date(DELIVERY_EXAMPLE.timestamp),
  JSON.stringify(DELIVERY_EXAMPLE),
);

const DELIVERY_HEADERS: ParameterObject[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      "The event's `id`: the same on every attempt of this delivery. Deduplicate by it for longer than the retry schedule lasts.",
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    example: EXAMPLE_HEADERS['webhook-id'],
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in Unix seconds; new on every attempt. Refuse a delivery whose timestamp is far from now (the `standardwebhooks` package allows five minutes).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: EXAMPLE_HEADERS['webhook-timestamp'],
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,` and the base64 HMAC-SHA256, keyed with the secret, of `<webhook-id>.<webhook-timestamp>.<body>`. For 24 hours after a rotation there are two, space separated, one by each secret: accept the delivery when either matches. The example signs the example body, as compact JSON, with the example `secret` of WebhookWithSecret.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
    example: EXAMPLE_HEADERS['webhook-signature'],
  },
];

const RETRY_AFTER = {
  'Retry-After': {
    description:
      'Seconds, or an HTTP date: the next attempt waits at least this long, at most a day.',
    schema: { type: 'string', example: '120' },
  },
};

const DELIVERY: OperationObject = {
  operationId: 'receivePetEvent',
  summary: 'An event delivered to the webhook',
  description: DELIVERY_DESCRIPTION,
  tags: ['webhooks'],
  parameters: DELIVERY_HEADERS,
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: EVENT_SCHEMA,
        example: DELIVERY_EXAMPLE,
      },
    },
  },
  responses: {
    '2XX': { description: 'Delivered: the event is not sent again.' },
    '410': {
      description:
        'Disables the webhook: nothing more is sent to it, and it shows `"disabled": true`. Delete it and create a new one to start again.',
    },
    '429': {
      description: 'Not delivered: retried, no sooner than `Retry-After` asks.',
      headers: RETRY_AFTER,
    },
    '503': {
      description: 'Not delivered: retried, no sooner than `Retry-After` asks.',
      headers: RETRY_AFTER,
    },
    default: {
      description:
        'Any other status (a redirect too), a timeout or a failed connection: not delivered, retried with the same `webhook-id` after the delays of `WEBHOOK_RETRY_SCHEDULE`; after the last attempt the delivery is given up and counted in `givenUpDeliveries`.',
    },
  },
  // The receiver checks the signature, not an API key.
  security: [],
};

/**
 * createWebhook's callbacks: each event POSTed to the `url` of the request body. OpenAPI 3.0, which
 * the document is, has no top-level `webhooks`; and `@ApiCallbacks` writes one response, without
 * headers or examples, so the callback is written out here.
 */
export const WEBHOOK_CALLBACKS: OperationObject['callbacks'] = {
  petEvent: { '{$request.body#/url}': { post: DELIVERY } },
};
