import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asJson,
  auth,
  MAX_ID,
  readRows,
  send,
  startParityPair,
  type CaseRequest,
  type Headers,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * putCategory (PUT /v1/categories/{categoryId}): naming, renaming, the same name again, taken
 * names, If-Match in each form, every class of bad input, keys without pets:write, and the order
 * of refusals; then what each stored (rows and category.updated events), and concurrent PUTs.
 */
describe.each(ENGINES)('bench reference answers putCategory as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  const path = (id: number | string) => `/v1/categories/${id}`;
  const name = (text: string, headers: Headers = {}): CaseRequest => ({
    headers: { ...asJson, ...headers },
    body: JSON.stringify({ name: text }),
  });
  /** Bytes sent as they are, labelled JSON, with a valid key, and any other headers. */
  const rawBody = (body: string | Buffer, headers: Headers = {}): CaseRequest => ({
    headers: { ...asJson, ...headers },
    body,
  });
  const READ_ONLY = { authorization: 'Bearer READ_ONLY_KEY' };

  const naming: ParityCase[] = [
    ['name an unnamed id', 201, 'PUT', path(7), name('Dogs 🐶')],
    ['the same name again changes nothing', 200, 'PUT', path(7), name('Dogs 🐶')],
    ['rename', 200, 'PUT', path(7), name('Hounds')],
    ['name another id', 201, 'PUT', path(8), name('Cats')],
    ['rename to a name another category has', 409, 'PUT', path(8), name('Hounds')],
    ['a taken name on an unnamed id', 409, 'PUT', path(9), name('Hounds')],
    ['names are compared exactly', 201, 'PUT', path(9), name('hounds')],
    ['an odd name', 201, 'PUT', path(10), name('Ünïcødé "q" \\ \n\u2028')],
    ['the largest id', 201, 'PUT', path(MAX_ID), name('Last')],
  ];

  const conditions: ParityCase[] = [
    ['a stale If-Match', 412, 'PUT', path(7), name('Puppies', { 'if-match': '"7-1"' })],
    ['a weak If-Match', 412, 'PUT', path(7), name('Puppies', { 'if-match': 'W/"7-2"' })],
    [
      'If-Match listing the current tag',
      200,
      'PUT',
      path(7),
      name('Puppies', { 'if-match': '"1-1", "7-2"' }),
    ],
    ['If-Match: * on a named id', 200, 'PUT', path(7), name('Dogs', { 'if-match': '*' })],
    ['If-Match: * on an unnamed id', 412, 'PUT', path(11), name('Birds', { 'if-match': '*' })],
    ['a malformed If-Match', 400, 'PUT', path(7), name('Birds', { 'if-match': 'not a tag' })],
    [
      'a stale If-Match and a taken name: 412',
      412,
      'PUT',
      path(8),
      name('Dogs', { 'if-match': '"8-9"' }),
    ],
    [
      'the current If-Match and a taken name: 409',
      409,
      'PUT',
      path(8),
      name('Dogs', { 'if-match': '"8-1"' }),
    ],
  ];

  const badInput: ParityCase[] = [
    ...(
      [
        ['no name', '{}'],
        ['a null name', '{"name":null}'],
        ['a blank name', '{"name":" \\t"}'],
        ['a name of 256 characters', JSON.stringify({ name: 'x'.repeat(256) })],
        ['a name of 256 astral characters', JSON.stringify({ name: '🐶'.repeat(256) })],
        ['a name with U+0000', '{"name":"a\\u0000b"}'],
        ['a name with a lone surrogate', '{"name":"a\\ud800"}'],
        ['a number', '{"name":7}'],
        ['an unknown member', '{"name":"Dogs","id":3}'],
        ['dropped members first', '{"toString":1,"name":"","__proto__":1,"q":1}'],
        ['an array', '["Dogs"]'],
        ['a string', '"Dogs"'],
        ['null', 'null'],
        ['broken JSON', '{"name":'],
        ['too deeply nested', `${'['.repeat(40)}${']'.repeat(40)}`],
      ] as const
    ).map(([what, body]): ParityCase => [what, 400, 'PUT', path(12), rawBody(body)]),
    ['an empty body', 400, 'PUT', path(12), rawBody('')],
    ['no body and no content type', 400, 'PUT', path(12), { headers: auth }],
    ...['text/plain', 'application/merge-patch+json'].map((type): ParityCase => [
      `Content-Type ${type}`,
      415,
      'PUT',
      path(12),
      rawBody('{"name":"Fish"}', { 'content-type': type }),
    ]),
    [
      'a compressed body',
      415,
      'PUT',
      path(12),
      rawBody('{"name":"Fish"}', { 'content-encoding': 'gzip' }),
    ],
    ['a body over the limit', 413, 'PUT', path(12), name('x'.repeat(20_000))],
  ];

  const ids: ParityCase[] = [
    ...['0', '-1', '01', '1.5', 'abc', '9007199254740992', '%20'].map((id): ParityCase => [
      `id ${id}`,
      400,
      'PUT',
      path(id),
      name('Fish'),
    ]),
    ['a trailing slash', 404, 'PUT', '/v1/categories/', name('Fish')],
    // Among the 400s the service reports If-Match, then the body, then the id.
    ['a bad id and a bad body: the body', 400, 'PUT', path('01'), rawBody('{"x":1}')],
    [
      'a bad id, a bad body and a malformed If-Match: the If-Match',
      400,
      'PUT',
      path('01'),
      rawBody('{bad', { 'if-match': 'bad' }),
    ],
    [
      'a bad id and a wrong content type: 415',
      415,
      'PUT',
      path('01'),
      rawBody('x', { 'content-type': 'text/plain' }),
    ],
  ];

  const keys: ParityCase[] = [
    ['no key', 401, 'PUT', path(13), { headers: { 'content-type': 'application/json' } }],
    [
      'a revoked key',
      401,
      'PUT',
      path(13),
      { ...name('Fish'), headers: { ...asJson, authorization: 'Bearer REVOKED_KEY' } },
    ],
    [
      'a pets:read key, a bad id and a malformed If-Match: 403',
      403,
      'PUT',
      path('01'),
      {
        headers: { ...READ_ONLY, 'content-type': 'application/json', 'if-match': 'x' },
        body: '{bad',
      },
    ],
    ['POST a category: 405 with Allow', 405, 'POST', path(7), { headers: asJson, body: '{}' }],
    ['PUT the collection: 405 with Allow', 405, 'PUT', '/v1/categories', name('Fish')],
  ];

  // Run in this order: each case's expected status keeps it meaning what it says.
  const cases: ParityCase[] = [...naming, ...conditions, ...badInput, ...ids, ...keys];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-category-${n}`);
    },
  );

  it('both stored the same categories and category.updated events, and nothing else', async () => {
    const categories = 'SELECT id, name, revision FROM categories ORDER BY id';
    const events = "SELECT pet_id, pet, previous FROM pet_events WHERE type = 'category.updated'";
    const stored = (url: string) =>
      Promise.all([readRows(url, categories), readRows(url, `${events} ORDER BY tx, seq`)]);
    const [fromService, fromReference] = await Promise.all(
      [pair.databaseUrls.service, pair.databaseUrls.reference].map(stored),
    );
    expect(fromReference).toEqual(fromService);
    const [rows, written] = fromService;
    expect(rows).toEqual([
      { id: '7', name: 'Dogs', revision: '4' },
      { id: '8', name: 'Cats', revision: '1' },
      { id: '9', name: 'hounds', revision: '1' },
      { id: '10', name: 'Ünïcødé "q" \\ \n\u2028', revision: '1' },
      { id: String(MAX_ID), name: 'Last', revision: '1' },
    ]);
    // A refusal or the same name again wrote nothing.
    expect(written.map(({ previous }) => previous)).toEqual([
      null,
      '{"name":"Dogs 🐶"}',
      null,
      null,
      null,
      null,
      '{"name":"Hounds"}',
      '{"name":"Puppies"}',
    ]);
    expect(written[1]).toEqual({
      pet_id: '7',
      pet: '{"id":7,"name":"Hounds"}',
      previous: '{"name":"Dogs 🐶"}',
    });
  });

  it('concurrent PUTs answer as the service: one claim of a name wins, PUTs of one new id apply in turn', async () => {
    const put = (baseUrl: string, id: number, text: string) =>
      send(baseUrl, {
        method: 'PUT',
        path: path(id),
        headers: pair.withKeys(asJson),
        body: JSON.stringify({ name: text }),
      }).then(({ status }) => status);
    // Ten claims of one name on ten ids, then ten names for one id never named.
    const race = async (baseUrl: string) => {
      const claims = Array.from({ length: 10 }, (_, i) => put(baseUrl, 100 + i, 'Claimed'));
      const sameId = Array.from({ length: 10 }, (_, i) => put(baseUrl, 110, `Named ${i}`));
      const counts = (statuses: number[]) =>
        statuses.reduce<Record<number, number>>(
          (count, status) => ({ ...count, [status]: (count[status] ?? 0) + 1 }),
          {},
        );
      return [counts(await Promise.all(claims)), counts(await Promise.all(sameId))];
    };

    const fromService = await race(pair.service.baseUrl);
    const fromReference = await race(pair.reference.baseUrl);

    expect(fromService).toEqual([
      { 201: 1, 409: 9 },
      { 201: 1, 200: 9 },
    ]);
    expect(fromReference).toEqual(fromService);
  });
});
