import { ValidateBy, type ValidationOptions } from 'class-validator';

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
