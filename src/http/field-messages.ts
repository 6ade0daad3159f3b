import type { TransformFnParams } from 'class-transformer';
import type { ValidationArguments, ValidationOptions } from 'class-validator';
import { parseCanonicalDecimal } from './canonical-decimal.js';

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
