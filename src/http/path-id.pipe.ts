import type { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../errors/api-error.js';
import { MAX_ID, parseCanonicalDecimal } from './canonical-decimal.js';

/**
 * A path segment that is a row's id (`petId`, a webhook's `id`), as a number: a canonical decimal
 * integer from 1 to MAX_ID, nothing else (no sign, fraction, exponent or leading zero). A pipe
 * rather than a DTO: one string in, one number out, without class-transformer and class-validator
 * on every getPet.
 */
export class ParsePathIdPipe implements PipeTransform<string, number> {
  /** `parameter`: the segment's name, as the 400's message gives it. */
  constructor(private readonly parameter: string) {}

  transform(value: string): number {
    const id = parseCanonicalDecimal(value);
    if (id !== undefined) return id;
    throw validationFailed(`${this.parameter} must be a decimal integer from 1 to ${MAX_ID}`);
  }
}
