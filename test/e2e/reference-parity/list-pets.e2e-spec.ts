import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  auth,
  cursor,
  MAX_ID,
  startParityPair,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * listPets (GET /v1/pets) on the seeded catalogue: paging, cursors, the status filter, and every
 * way a query string can be wrong. The reference must answer each exactly as the service does.
 */
describe.each(ENGINES)('bench reference answers listPets as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  // Run in this order; the expected status keeps each case meaning what it says.
  const cases: ParityCase[] = [
    ['default page with a next link', 200, 'GET', '/v1/pets', { headers: auth }],
    ['limit=5', 200, 'GET', '/v1/pets?limit=5', { headers: auth }],
    [
      'limit=100: the whole catalogue, no next link',
      200,
      'GET',
      '/v1/pets?limit=100',
      { headers: auth },
    ],
    [
      'status filter kept in the next link',
      200,
      'GET',
      '/v1/pets?status=sold&limit=2',
      { headers: auth },
    ],
    ['following a cursor', 200, 'GET', `/v1/pets?limit=5&cursor=${cursor(5)}`, { headers: auth }],
    [
      'cursor and status',
      200,
      'GET',
      `/v1/pets?status=sold&limit=2&cursor=${cursor(4)}`,
      { headers: auth },
    ],
    ['last page', 200, 'GET', `/v1/pets?limit=10&cursor=${cursor(20)}`, { headers: auth }],
    ['cursor past the end', 200, 'GET', `/v1/pets?cursor=${cursor(MAX_ID)}`, { headers: auth }],
    ['If-None-Match *', 304, 'GET', '/v1/pets', { headers: { ...auth, 'if-none-match': '*' } }],
    [
      'If-None-Match * on a page with a next link, HEAD',
      304,
      'HEAD',
      '/v1/pets?limit=5',
      { headers: { ...auth, 'if-none-match': '*' } },
    ],
    [
      'If-None-Match naming another ETag',
      200,
      'GET',
      '/v1/pets?limit=5',
      { headers: { ...auth, 'if-none-match': 'W/"other", "more"' } },
    ],
    [
      'If-None-Match malformed',
      200,
      'GET',
      '/v1/pets?limit=5',
      { headers: { ...auth, 'if-none-match': '*, W/"other"' } },
    ],
    ['limit=0', 400, 'GET', '/v1/pets?limit=0', { headers: auth }],
    ['limit=101', 400, 'GET', '/v1/pets?limit=101', { headers: auth }],
    ['limit empty', 400, 'GET', '/v1/pets?limit=', { headers: auth }],
    ['limit=05', 400, 'GET', '/v1/pets?limit=05', { headers: auth }],
    ['limit=1.5', 400, 'GET', '/v1/pets?limit=1.5', { headers: auth }],
    ['limit twice', 400, 'GET', '/v1/pets?limit=1&limit=2', { headers: auth }],
    ['unknown status', 400, 'GET', '/v1/pets?status=lost', { headers: auth }],
    ['status twice', 400, 'GET', '/v1/pets?status=sold&status=sold', { headers: auth }],
    ['garbage cursor', 400, 'GET', '/v1/pets?cursor=garbage!', { headers: auth }],
    ['non-canonical cursor after:0', 400, 'GET', '/v1/pets?cursor=YWZ0ZXI6MA', { headers: auth }],
    ['empty cursor', 400, 'GET', '/v1/pets?cursor=', { headers: auth }],
    ['unknown parameter', 400, 'GET', '/v1/pets?colour=brown', { headers: auth }],
    ['__proto__ parameter', 400, 'GET', '/v1/pets?__proto__=x', { headers: auth }],
    [
      'toString parameter after a valid one',
      400,
      'GET',
      '/v1/pets?limit=5&toString=1',
      { headers: auth },
    ],
    [
      'dropped parameters named first, then unknown ones, then wrong values',
      400,
      'GET',
      '/v1/pets?colour=1&constructor=2&limit=0&valueOf=3&prototype=4',
      { headers: auth },
    ],
    [
      'parameter names quoted when they would vanish in the message',
      400,
      'GET',
      '/v1/pets?=1&a%20b=2&x%00=3&%22q%22=4&%C3%BC=5',
      { headers: auth },
    ],
    [
      'every parameter wrong',
      400,
      'GET',
      '/v1/pets?cursor=x&b=1&status=y&limit=0&a=2',
      { headers: auth },
    ],
    ['HEAD', 200, 'HEAD', '/v1/pets?limit=2', { headers: auth }],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-list-${n}`);
    },
  );
});
