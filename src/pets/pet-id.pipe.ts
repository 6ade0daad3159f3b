import { Injectable, type PipeTransform } from '@nestjs/common';
import { validationFailed } from '../errors/api-error.js';
import { MAX_ID, parseCanonicalDecimal } from '../http/canonical-decimal.js';

/**
 * The `petId` path segment as a number: a canonical decimal integer from 1 to MAX_ID, nothing else
 * (no sign, fraction, exponent or leading zero). A pipe rather than a DTO: one string in, one
 * number out, without class-transformer and class-validator on every getPet.
 */
@Injectable()
export class ParsePetIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = parseCanonicalDecimal(value);
    if (id !== undefined) return id;
    throw validationFailed(`petId must be a decimal integer from 1 to ${MAX_ID}`);
  }
}
