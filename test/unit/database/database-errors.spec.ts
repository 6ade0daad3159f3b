import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isReadNodeFailure } from '../../../src/database/database-errors.js';

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

  it('treats a write refused by a read-only node (25006, in a failover) as unavailable', () => {
    const readOnly = withCode('cannot execute UPDATE in a read-only transaction', '25006');
    expect(isDatabaseUnavailable(readOnly)).toBe(true);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('query failed'), { driverError: readOnly })),
    ).toBe(true);
  });

  it('ignores a numeric code', () => {
    expect(isDatabaseUnavailable(withCode('x', 8006))).toBe(false);
  });

  it.each([
    'timeout exceeded when trying to connect',
    'Driver not Connected',
    'Client has encountered a connection error and is not queryable',
  ])('recognises the message %j case-insensitively', (message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
  });
});

describe('isReadNodeFailure', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5433', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['the database system is starting up', withCode('the database system is starting up', '57P03')],
    [
      'the database system is shutting down',
      withCode('the database system is shutting down', '57P03'),
    ],
    [
      'terminated by an administrator (promotion, stop)',
      withCode('terminating connection', '57P01'),
    ],
    ['connection dropped mid-query', new Error('Connection terminated unexpectedly')],
    ['a recovery conflict', withCode('canceling statement due to conflict with recovery', '40001')],
    [
      'a recovery conflict wrapped by TypeORM',
      Object.assign(new Error('query failed'), {
        driverError: withCode('canceling statement due to conflict with recovery', '40001'),
      }),
    ],
    ['the database dropped under the standby', withCode('database dropped', '57P04')],
  ])('is true for %s: the primary may answer', (_label, error) => {
    expect(isReadNodeFailure(error)).toBe(true);
  });

  it.each([
    ['a syntax error', withCode('syntax error', '42601')],
    ['an invalid input', withCode('invalid input syntax for type integer', '22P02')],
    ['a missing table', withCode('relation "pets" does not exist', '42P01')],
    ['an error without a code', new Error('something else')],
    ['a non-Error', { code: '40001' }],
  ])('is false for %s: the same query would fail on the primary', (_label, error) => {
    expect(isReadNodeFailure(error)).toBe(false);
  });
});
