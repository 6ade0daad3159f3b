import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestIdOf } from '../../../src/http/request-id.js';
import { hygieneHeaders } from '../../../src/http/response-headers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const withRequestId = (value?: string | string[]) =>
  ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe('hygieneHeaders', () => {
  it('are no-store, nosniff and the request id', () => {
    expect(hygieneHeaders('req-1')).toEqual({
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-request-id': 'req-1',
    });
  });
});

describe('requestIdOf', () => {
  it.each(['client-42.a:b_c', 'x'.repeat(128)])('echoes the sane id %j', (id) => {
    expect(requestIdOf(withRequestId(id))).toBe(id);
  });

  it.each([undefined, '', 'has space', 'x'.repeat(129), '<script>', ['a', 'b']])(
    'makes a new UUID instead of %j',
    (id) => {
      expect(requestIdOf(withRequestId(id))).toMatch(UUID);
    },
  );
});
