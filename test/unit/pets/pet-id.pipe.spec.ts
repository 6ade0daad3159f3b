import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import { ParsePetIdPipe } from '../../../src/pets/pet-id.pipe.js';

const pipe = new ParsePetIdPipe();

describe('ParsePetIdPipe', () => {
  // The parser's cases are in test/unit/http/canonical-decimal.spec.ts; these are the pipe's own.
  it('parses a canonical decimal id', () => {
    expect(pipe.transform('42')).toBe(42);
  });

  it.each(['0', 'abc', '9007199254740992'])(
    'refuses %j with the Error body naming petId',
    (value) => {
      let error: unknown;
      try {
        pipe.transform(value);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).body).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'petId must be a decimal integer from 1 to 9007199254740991',
        status: 400,
      });
    },
  );
});
