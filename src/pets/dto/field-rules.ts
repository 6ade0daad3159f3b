import type { TransformFnParams } from 'class-transformer';
import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { parseCanonicalDecimal } from '../../http/canonical-decimal.js';

/**
 * One message per field whichever constraint fails, so a 400 always names the field and what was
 * expected, and says so plainly when the field is missing or repeated.
 */
export function expecting(
  field: string,
  expectation: string,
  source: 'body' | 'query' | 'path' = 'body',
): ValidationOptions {
  return {
    message: ({ value }: ValidationArguments) => {
      if (value === undefined) return `${field} is required`;
      if (source === 'query' && Array.isArray(value)) return `${field} must be given at most once`;
      return `${field} must be ${expectation}`;
    },
  };
}

/**
 * Query values arrive as strings: a canonical decimal becomes a number, anything else (zero, sign,
 * fraction, leading zero, repeated parameter) stays as it came, for the validators to reject.
 */
export function decimalInteger({ value }: TransformFnParams): unknown {
  if (typeof value !== 'string') return value;
  return parseCanonicalDecimal(value) ?? value;
}

/** The most characters (code points) a pet name may have. */
export const PET_NAME_MAX_LENGTH = 255;

/**
 * A pet name (docs/api-design.md, "Validation"): 1 to PET_NAME_MAX_LENGTH code points, not only
 * whitespace, and storable exactly as sent on both engines (PostgreSQL text cannot hold U+0000,
 * and an unpaired surrogate is not Unicode text at all).
 */
export function isPetName(value: unknown): boolean {
  if (
    typeof value !== 'string' ||
    value.trim() === '' ||
    value.includes('\u0000') ||
    !value.isWellFormed()
  ) {
    return false;
  }
  return [...value].length <= PET_NAME_MAX_LENGTH;
}

export function IsPetName(options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isPetName', validator: { validate: isPetName } }, options);
}
