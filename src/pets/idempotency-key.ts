import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../errors/api-error.js';
import { isPrintableAscii } from '../http/printable-ascii.js';
import type { NewPetDto } from './dto/new-pet.dto.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Set to `true` on a createPet answer that an earlier request with the same key created. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key is remembered (docs/api-design.md, "Idempotency"). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
export const IDEMPOTENCY_KEY_TTL_MS = IDEMPOTENCY_KEY_TTL_HOURS * 60 * 60 * 1000;

/** Node hands request header names over in lower case. */
const IDEMPOTENCY_KEY_FIELD = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** The request's Idempotency-Key, validated; undefined when the header is absent. */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => {
    const value = context.switchToHttp().getRequest<FastifyRequest>().headers[
      IDEMPOTENCY_KEY_FIELD
    ];
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
 * Identifies a createPet request by what it asks for, so a retry is recognised however its JSON
 * was spelled (key order, whitespace): the validated fields, in a fixed order.
 */
export function createPetRequestHash({ name, categoryId, status }: NewPetDto): string {
  return createHash('sha256')
    .update(JSON.stringify([name, categoryId, status ?? null]))
    .digest('hex');
}
