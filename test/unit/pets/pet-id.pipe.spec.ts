import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import { ParsePetIdPipe } from '../../../src/pets/pet-id.pipe.js';

const pipe = new ParsePetIdPipe();

describe('ParsePetIdPipe', () => {
  it.each([
    ['1', 1],
    ['42', 42],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('parses %j', (value, expected) => {
    expect(pipe.transform(value)).toBe(expected);
  });

  it.each([
    '0',
    '007',
    '+1',
    '-1',
    '1.0',
    '1e3',
    ' 1',
    '1 ',
    '0x10',
    '',
    'abc',
    '9007199254740992',
    '99999999999999999',
  ])('refuses %j with the Error body naming petId', (value) => {
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
  });
});
