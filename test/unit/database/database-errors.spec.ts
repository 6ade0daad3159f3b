import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../../src/database/database-errors.js';

const withCode = (message: string, code: unknown) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'a plain object with an unavailable code',
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
    ],
    ['a string', 'Connection terminated unexpectedly'],
    ['undefined', undefined],
    ['null', null],
  ])('is false for non-Error input: %s', (_label, value) => {
    expect(isDatabaseUnavailable(value)).toBe(false);
  });

  it('reads the code of a nested driverError when the wrapper has none', () => {
    const wrapper = Object.assign(new Error('query failed'), {
      driverError: withCode('x', '57P03'),
    });
    expect(isDatabaseUnavailable(wrapper)).toBe(true);
  });

  it('is false when the nested driverError has a query-error code', () => {
    const wrapper = Object.assign(new Error('query failed'), {
      driverError: withCode('x', '42P01'),
    });
    expect(isDatabaseUnavailable(wrapper)).toBe(false);
  });

  it('tolerates a driverError that is not an object', () => {
    expect(
      isDatabaseUnavailable(Object.assign(new Error('query failed'), { driverError: 'oops' })),
    ).toBe(false);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('query failed'), { driverError: null })),
    ).toBe(false);
  });

  it.each(['08000', '08001', '08003', '08P01'])(
    'treats every connection-exception class code (%s) as unavailable',
    (code) => {
      expect(isDatabaseUnavailable(withCode('x', code))).toBe(true);
    },
  );

  it.each(['42601', '23505', 'SQLITE_CONSTRAINT', 'SQLITE_ERROR'])(
    'is false for the query-error code %s',
    (code) => {
      expect(isDatabaseUnavailable(withCode('x', code))).toBe(false);
    },
  );

  it('ignores a numeric code', () => {
    expect(isDatabaseUnavailable(withCode('x', 8006))).toBe(false);
  });

  it.each(['timeout exceeded when trying to connect', 'Driver not Connected'])(
    'recognises the message %j case-insensitively',
    (message) => {
      expect(isDatabaseUnavailable(new Error(message))).toBe(true);
    },
  );
});
