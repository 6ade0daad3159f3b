import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { createHash } from 'node:crypto';
import { requestOf } from '../http/http-context.js';
import { validationFailed } from '../errors/api-error.js';
import { isPrintableAscii, PRINTABLE_ASCII_PATTERN } from '../http/printable-ascii.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Set to `true` on a create's answer that an earlier request with the same key created. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key is remembered (docs/api-design.md, "Idempotency"). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
export const IDEMPOTENCY_KEY_TTL_MS = IDEMPOTENCY_KEY_TTL_HOURS * 60 * 60 * 1000;

/** The Idempotency-Key request header, as every create that takes it documents it. */
export const ApiIdempotencyKeyHeader = () =>
  ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description:
      `Makes retries safe: for ${IDEMPOTENCY_KEY_TTL_HOURS} hours, a repeat of this request with ` +
      'the same key and body returns the first response and creates nothing; the same key with ' +
      'another body is a 422. Keys are scoped to the API key. A new UUID per logical request is ' +
      'a good choice, e.g. `5f0c6e1e-8d7b-4a7e-9d0a-3b1f2c4d5e6f`.',
    // No example value: Swagger UI would pre-fill it, and every reader's "Try it out" would then
    // share one key and get the first reader's answer back.
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      pattern: PRINTABLE_ASCII_PATTERN,
    },
  });

/** The 201's header that says it is a replay. */
export const IDEMPOTENT_REPLAYED_RESPONSE_HEADER = {
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description:
      '`true` when this is the stored response to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Node hands request header names over in lower case. */
const IDEMPOTENCY_KEY_FIELD = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** The request's Idempotency-Key, validated; undefined when the header is absent. */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => {
    const value = requestOf(context).headers[IDEMPOTENCY_KEY_FIELD];
    if (value === undefined) return undefined;
    if (typeof value === 'string' && isPrintableAscii(value, IDEMPOTENCY_KEY_MAX_LENGTH)) {
      return value;
    }
    throw validationFailed(
      `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`,
    );
  },
);

/**
 * Identifies a create request by what it asks for, so a retry is recognised however its JSON was
 * spelled (key order, whitespace): its validated fields, in a fixed order and shape that differs
 * between operations, so one key used for two of them never matches.
 */
export function requestHash(fields: unknown): string {
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}
