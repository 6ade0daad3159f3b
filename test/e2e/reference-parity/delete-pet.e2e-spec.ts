import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  auth,
  json,
  SEEDED_PETS,
  startParityPair,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * deletePet (DELETE /v1/pets/{petId}): a delete, the 404s after it everywhere, If-Match in each
 * form, bad ids and If-Match, keys without pets:write, and the order of refusals. Pets are created
 * through the API as the cases go, so they get the same ids on both; the closing listing compares
 * what each kept.
 */
describe.each(ENGINES)('bench reference answers deletePet as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  const path = (id: number | string) => `/v1/pets/${id}`;
  const remove = (ifMatch?: string) => ({
    headers: { ...auth, ...(ifMatch !== undefined && { 'if-match': ifMatch }) },
  });
  let lastId = SEEDED_PETS;
  const add = (): [ParityCase, number] => {
    lastId += 1;
    return [
      [`add pet ${lastId}`, 201, 'POST', '/v1/pets', json({ name: 'Typo', categoryId: 4 })],
      lastId,
    ];
  };

  const [addFirst, first] = add();
  const [addSecond, second] = add();
  const [addThird, third] = add();
  const cases: ParityCase[] = [
    addFirst,
    ['delete it', 204, 'DELETE', path(first), remove()],
    ['delete it again', 404, 'DELETE', path(first), remove()],
    ['getPet after the delete', 404, 'GET', path(first), { headers: auth }],
    [
      'updatePet after the delete',
      404,
      'PATCH',
      path(first),
      { headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"X"}' },
    ],
    addSecond,
    ['a stale If-Match', 412, 'DELETE', path(second), remove(`"${second}-2"`)],
    ['a weak If-Match', 412, 'DELETE', path(second), remove(`W/"${second}-1"`)],
    ['a malformed If-Match', 400, 'DELETE', path(second), remove('not a tag')],
    [
      'If-Match listing the current tag',
      204,
      'DELETE',
      path(second),
      remove(`"1-1", "${second}-1"`),
    ],
    addThird,
    ['no key', 401, 'DELETE', path(third), {}],
    [
      'a key without pets:write',
      403,
      'DELETE',
      path(third),
      { headers: { authorization: 'Bearer READ_ONLY_KEY' } },
    ],
    ['a malformed id before the pet', 400, 'DELETE', path('01'), remove('"0-0"')],
    ['an id past the largest', 400, 'DELETE', path('9007199254740992'), remove()],
    ['an unknown pet before If-Match', 404, 'DELETE', path(9007199254740991), remove('"0-0"')],
    ['If-Match: *', 204, 'DELETE', path(third), remove('*')],
    [
      'the catalogue without them',
      200,
      'GET',
      `/v1/pets?limit=100&cursor=${cursorAfter(SEEDED_PETS - 5)}`,
      { headers: auth },
    ],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-delete-${n}`);
    },
  );
});

/** The cursor of a page after pet `id`, as listPets writes it. */
function cursorAfter(id: number): string {
  return Buffer.from(`after:${id}`).toString('base64url');
}
