import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  auth,
  json,
  MAX_ID,
  SEEDED_PETS,
  startParityPair,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * getPet (GET /v1/pets/{petId}, deprecated): seeded and created pets, absent and malformed ids,
 * and the deprecation headers on every answer.
 */
describe.each(ENGINES)('bench reference answers getPet as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
    // A pet created through the API, not seeded: its answer is built from what createPet stored.
    await pair.expectSameAnswer(
      [
        'create a pet without a status',
        201,
        'POST',
        '/v1/pets',
        json({ name: 'Tom', categoryId: 2 }),
      ],
      'parity-get-setup',
    );
  });
  afterAll(() => pair?.stop());

  // Run in this order; the expected status keeps each case meaning what it says.
  const cases: ParityCase[] = [
    ['a seeded pet without a status', 200, 'GET', '/v1/pets/2', { headers: auth }],
    [
      'a seeded pet with a status and odd characters in its name',
      200,
      'GET',
      '/v1/pets/3',
      { headers: auth },
    ],
    [
      'the pet created without a status',
      200,
      'GET',
      `/v1/pets/${SEEDED_PETS + 1}`,
      { headers: auth },
    ],
    ['If-None-Match *', 304, 'GET', '/v1/pets/2', { headers: { ...auth, 'if-none-match': '*' } }],
    [
      'If-None-Match *, HEAD',
      304,
      'HEAD',
      '/v1/pets/2',
      { headers: { ...auth, 'if-none-match': '*' } },
    ],
    [
      'If-None-Match naming another ETag',
      200,
      'GET',
      '/v1/pets/2',
      { headers: { ...auth, 'if-none-match': 'W/"other"' } },
    ],
    [
      'If-None-Match * on an absent pet',
      404,
      'GET',
      `/v1/pets/${MAX_ID}`,
      { headers: { ...auth, 'if-none-match': '*' } },
    ],
    ['absent', 404, 'GET', `/v1/pets/${MAX_ID}`, { headers: auth }],
    ['id abc', 400, 'GET', '/v1/pets/abc', { headers: auth }],
    ['id 0', 400, 'GET', '/v1/pets/0', { headers: auth }],
    ['id 007', 400, 'GET', '/v1/pets/007', { headers: auth }],
    ['id 2^53', 400, 'GET', '/v1/pets/9007199254740992', { headers: auth }],
    ['id 1e3', 400, 'GET', '/v1/pets/1e3', { headers: auth }],
    ['no key', 401, 'GET', '/v1/pets/1', {}],
    ['HEAD', 200, 'HEAD', '/v1/pets/1', { headers: auth }],
    ['an id too long to route', 400, 'GET', `/v1/pets/${'1'.repeat(300)}`, { headers: auth }],
    ['bad percent-encoding', 400, 'GET', '/v1/pets/%E0%A4%A', { headers: auth }],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-get-${n}`);
    },
  );
});
