import type { ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_ID } from '../../http/canonical-decimal.js';
import { ORDER_STATUSES } from '../order-status.js';

/** An int64 id as a JSON client carries it exactly. */
export const ORDER_ID_SCHEMA = {
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ID,
} as const;

/** The bounds of `holdSeconds` (docs/api-design.md, "Orders"): a minute to a day. */
export const MIN_HOLD_SECONDS = 60;
export const MAX_HOLD_SECONDS = 86_400;

const TIMESTAMP = { type: 'string', format: 'date-time', example: '2026-11-29T10:15:00.000Z' };

/** An Order property: its documentation, with the JSON type and presence the serializer needs. */
type OrderProperty = ApiPropertyOptions & { type: 'integer' | 'string'; required: boolean };

/**
 * The Order's properties in the order they are sent, written once: OrderDto documents its fields
 * with these, and Fastify's serializer schema is made from them (order-response.schema.ts).
 */
export const ORDER_PROPERTIES = {
  id: { description: 'Assigned by the service.', ...ORDER_ID_SCHEMA, example: 7, required: true },
  petId: {
    description: 'The animal the order holds, then sells or releases.',
    ...ORDER_ID_SCHEMA,
    example: 42,
    required: true,
  },
  status: {
    description:
      '`open` while the animal is held; then `completed` (sold), `cancelled` or `expired` (released), each final.',
    type: 'string',
    enum: [...ORDER_STATUSES],
    enumName: 'OrderStatus',
    example: 'open',
    required: true,
  },
  createdAt: {
    description: 'When the order was placed: RFC 3339, UTC, with milliseconds.',
    ...TIMESTAMP,
    type: 'string',
    required: true,
  },
  expiresAt: {
    description:
      'The hold’s deadline: from this instant on the order cannot be completed or cancelled, and the animal can be ordered again.',
    ...TIMESTAMP,
    type: 'string',
    example: '2026-11-29T10:30:00.000Z',
    required: true,
  },
  closedAt: {
    description:
      'When the order stopped being open; absent while it is open. An expired order’s is its `expiresAt`.',
    ...TIMESTAMP,
    type: 'string',
    example: '2026-11-29T10:21:07.250Z',
    required: false,
  },
} as const satisfies Record<string, OrderProperty>;
