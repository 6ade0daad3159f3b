import { ValidateBy, type ValidationOptions } from 'class-validator';

/** The most characters (code points) a name may have: a pet's or a category's. */
export const NAME_MAX_LENGTH = 255;

/**
 * A pet's or a category's name (docs/api-design.md, "Validation"): 1 to PET_NAME_MAX_LENGTH code points, not only
 * whitespace, and storable exactly as sent on both engines (PostgreSQL text cannot hold U+0000,
 * and an unpaired surrogate is not Unicode text at all).
 */
export function isName(value: unknown): boolean {
  if (
    typeof value !== 'string' ||
    value.trim() === '' ||
    value.includes('\u0000') ||
    !value.isWellFormed()
  ) {
    return false;
  }
  return [...value].length <= NAME_MAX_LENGTH;
}

export function IsName(options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isName', validator: { validate: isName } }, options);
}
