import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  startParityPair,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * The API key, checked before anything else: missing, unknown, malformed, revoked or tampered
 * keys, the Bearer scheme in any case, and a refusal for the key that comes before one for the body
 * (except a body over the limit, refused while it is read).
 */
describe.each(ENGINES)('bench reference checks API keys as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  // Run in this order; the expected status keeps each case meaning what it says.
  const cases: ParityCase[] = [
    ['no key', 401, 'GET', '/v1/pets', {}],
    [
      'an unknown well-formed key',
      401,
      'GET',
      '/v1/pets',
      { headers: { authorization: `Bearer pets_0123456789ab_${'A'.repeat(43)}` } },
    ],
    ['a malformed key', 401, 'GET', '/v1/pets', { headers: { authorization: 'Bearer not-a-key' } }],
    [
      'another scheme',
      401,
      'GET',
      '/v1/pets',
      { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
    ],
    ['the scheme alone', 401, 'GET', '/v1/pets', { headers: { authorization: 'Bearer' } }],
    ['an empty Authorization header', 401, 'GET', '/v1/pets', { headers: { authorization: '' } }],
    [
      'two spaces after the scheme',
      401,
      'GET',
      '/v1/pets?limit=1',
      { headers: { authorization: 'Bearer  KEY' } },
    ],
    [
      'the scheme in capitals',
      200,
      'GET',
      '/v1/pets?limit=1',
      { headers: { authorization: 'BEARER KEY' } },
    ],
    [
      'the scheme in lower case',
      200,
      'GET',
      '/v1/pets?limit=1',
      { headers: { authorization: 'bearer KEY' } },
    ],
    ['a revoked key', 401, 'GET', '/v1/pets', { headers: { authorization: 'Bearer REVOKED_KEY' } }],
    [
      'a key with its secret altered',
      401,
      'GET',
      '/v1/pets',
      { headers: { authorization: 'Bearer TAMPERED_KEY' } },
    ],
    [
      'no key and a bad body: 401 first',
      401,
      'POST',
      '/v1/pets',
      { headers: { 'content-type': 'application/json' }, body: '{not json' },
    ],
    [
      'no key and a wrong content type: 401 first',
      401,
      'POST',
      '/v1/pets',
      { headers: { 'content-type': 'text/plain' }, body: 'x' },
    ],
    [
      'no key and a body over the limit: 413 first',
      413,
      'POST',
      '/v1/pets',
      { headers: { 'content-type': 'application/json' }, body: 'x'.repeat(16_385) },
    ],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-key-${n}`);
    },
  );
});
