import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import { ParsePathIdPipe } from '../../../src/http/path-id.pipe.js';

describe('ParsePathIdPipe', () => {
  // The parser's cases are in test/unit/http/canonical-decimal.spec.ts; these are the pipe's own.
  it('parses a canonical decimal id', () => {
    expect(new ParsePathIdPipe('petId').transform('42')).toBe(42);
  });

  it.each([
    ['petId', '0'],
    ['petId', 'abc'],
    ['id', '9007199254740992'],
  ])('refuses a bad %s (%j) with the Error body naming it', (parameter, value) => {
    let error: unknown;
    try {
      new ParsePathIdPipe(parameter).transform(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).body).toEqual({
      code: 'VALIDATION_FAILED',
      message: `${parameter} must be a decimal integer from 1 to 9007199254740991`,
      status: 400,
    });
  });
});
