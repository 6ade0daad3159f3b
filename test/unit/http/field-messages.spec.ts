import type { TransformFnParams } from 'class-transformer';
import type { ValidationArguments } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { decimalInteger, expecting } from '../../../src/http/field-messages.js';

describe('decimalInteger', () => {
  const transform = (value: unknown) => decimalInteger({ value } as TransformFnParams);

  it.each([
    ['5', 5],
    ['1234567890123456', 1234567890123456],
  ])('turns the canonical decimal %j into the number %d', (value, expected) => {
    expect(transform(value)).toBe(expected);
  });

  it.each([
    '0',
    '007',
    '+1',
    '1.5',
    '-1',
    ' 1',
    '1 ',
    '1e3',
    '0x10',
    '',
    '12345678901234567',
    '9'.repeat(40),
    '١',
  ])('leaves %j as the string it came as', (value) => {
    expect(transform(value)).toBe(value);
  });

  it('leaves a repeated parameter (array) unchanged', () => {
    const value = ['1', '2'];
    expect(transform(value)).toBe(value);
  });

  it.each([undefined, null, 5])('leaves the non-string %j unchanged', (value) => {
    expect(transform(value)).toBe(value);
  });
});

describe('expecting', () => {
  const messageFor = (source: 'body' | 'query' | 'path' | undefined, value: unknown) => {
    const { message } = expecting('limit', 'a decimal integer from 1 to 100', source);
    if (typeof message !== 'function') throw new Error('expected a message function');
    return message({ value, property: 'limit' } as ValidationArguments);
  };

  it.each(['body', 'query', 'path', undefined] as const)(
    'says the field is required when the value is undefined (%s)',
    (source) => {
      expect(messageFor(source, undefined)).toBe('limit is required');
    },
  );

  it('says a query parameter must be given at most once when it came as an array', () => {
    expect(messageFor('query', ['1', '2'])).toBe('limit must be given at most once');
  });

  it.each(['body', 'path', undefined] as const)(
    'states the expectation for an array outside the query (%s)',
    (source) => {
      expect(messageFor(source, ['1', '2'])).toBe('limit must be a decimal integer from 1 to 100');
    },
  );

  it.each([null, '', 'abc', 0])(
    'states the expectation for the present but invalid value %j',
    (value) => {
      expect(messageFor('query', value)).toBe('limit must be a decimal integer from 1 to 100');
    },
  );
});
