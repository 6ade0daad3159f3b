import type { ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { EVENT_TYPES } from '../../events/pet-event.js';

/** The most characters a webhook URL may have, as the WHATWG URL parser writes it. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

export const TIMESTAMP = { type: 'string', format: 'date-time' } as const;

/** A webhook's id: an int64 a JSON client carries exactly, like a pet's. */
export const WEBHOOK_ID_SCHEMA = {
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ID,
  example: 7,
} as const;

/** A list of event types, as a filter names them. */
export const EVENT_TYPE_LIST_SCHEMA = {
  type: 'array' as const,
  items: { type: 'string', enum: [...EVENT_TYPES] },
  example: ['pet.updated'],
};

/** The documentation of a webhook's members, written once for every DTO that has them. */
export const WEBHOOK_PROPERTIES = {
  id: {
    description: 'Unique identifier assigned by the service on creation.',
    ...WEBHOOK_ID_SCHEMA,
  },
  url: {
    description: `Where deliveries are POSTed: an absolute http or https URL of at most ${WEBHOOK_URL_MAX_LENGTH} characters, without credentials or fragment, as the WHATWG URL parser normalizes it.`,
    type: 'string',
    format: 'uri',
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    example: 'https://marketplace.example/hooks/animal-store',
  },
  events: {
    description:
      'The event types delivered to this webhook; `null`: every type, including types added later.',
    ...EVENT_TYPE_LIST_SCHEMA,
    nullable: true,
  },
  createdAt: {
    description: 'When the webhook was created.',
    ...TIMESTAMP,
    example: '2026-11-25T17:30:00.000Z',
  },
  secret: {
    description:
      'The signing secret: `whsec_` and base64 of 32 random bytes. Shown only in this answer; verify each delivery with it (Standard Webhooks).',
    type: 'string',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/ZPh7tY2Vp8=',
  },
} as const satisfies Record<string, ApiPropertyOptions>;
