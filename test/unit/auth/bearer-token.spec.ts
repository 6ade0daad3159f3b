import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../src/auth/api-key.js';
import { bearerTokenOf } from '../../../src/auth/bearer-token.js';

describe('bearerTokenOf', () => {
  it('says the key is missing when there is no Authorization header', () => {
    expect(bearerTokenOf(undefined)).toEqual({ refusal: 'missing' });
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])(
    'takes the token after the scheme in any case, with its hash: %s',
    (scheme) => {
      expect(bearerTokenOf(`${scheme} pets_0123456789ab_secret`)).toEqual({
        token: 'pets_0123456789ab_secret',
        hash: hashApiKey('pets_0123456789ab_secret'),
      });
    },
  );

  it.each([
    ['an empty header', ''],
    ['the scheme alone', 'Bearer'],
    ['the scheme and a space', 'Bearer '],
    ['two spaces after the scheme', 'Bearer  key'],
    ['a space after the token', 'Bearer key '],
    ['a space before the scheme', ' Bearer key'],
    ['two tokens', 'Bearer key other'],
    ['a tab for the space', 'Bearer\tkey'],
    ['no space after the scheme', 'Bearerkey'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
  ])('says the header is malformed for %s', (_label, authorization) => {
    expect(bearerTokenOf(authorization)).toEqual({ refusal: 'malformed' });
  });
});
