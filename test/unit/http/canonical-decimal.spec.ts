import { describe, expect, it } from 'vitest';
import { MAX_ID, parseCanonicalDecimal } from '../../../src/http/canonical-decimal.js';

describe('parseCanonicalDecimal', () => {
  it.each([
    ['1', 1],
    ['42', 42],
    ['12345678901', 12345678901],
    ['9007199254740991', MAX_ID],
  ])('reads %j as %d', (text, expected) => {
    expect(parseCanonicalDecimal(text)).toBe(expected);
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
    '١',
    '9007199254740992',
    '9999999999999999',
    '12345678901234567',
  ])('refuses %j', (text) => {
    expect(parseCanonicalDecimal(text)).toBeUndefined();
  });
});
