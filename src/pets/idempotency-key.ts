import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../common/api-error.js';
import type { NewPetDto } from './dto/new-pet.dto.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** How long a key is remembered (api-decisions §10). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, validated; undefined when the header is absent. */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => {
    const value = context.switchToHttp().getRequest<FastifyRequest>().headers['idempotency-key'];
    if (value === undefined) return undefined;
    if (typeof value === 'string' && IDEMPOTENCY_KEY_PATTERN.test(value)) return value;
    throw validationFailed(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`);
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
