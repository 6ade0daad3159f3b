import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  asJson,
  auth,
  json,
  MAX_ID,
  SEEDED_PETS,
  startParityPair,
  type CaseRequest,
  type Headers,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * updatePet (PATCH /v1/pets/{petId}): every cell of the status table, name and categoryId
 * changes, a patch that changes nothing, If-Match in each form, every class of bad input, unknown
 * and malformed ids, a key without pets:write, and the order of refusals. Pets are created through
 * the API as the cases go, so they get the same ids on both; the ETags (`"<id>-<revision>"`) and
 * the closing listing compare what each stored.
 */
describe.each(ENGINES)('bench reference answers updatePet as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  const asMergePatch = { ...auth, 'content-type': 'application/merge-patch+json' };
  /** A merge patch with a valid key, and any other headers. */
  const patch = (body: unknown, headers: Headers = {}): CaseRequest => ({
    headers: { ...asMergePatch, ...headers },
    body: JSON.stringify(body),
  });
  /** Bytes sent as they are, labelled a merge patch, with a valid key. */
  const rawPatch = (body: string | Buffer, headers: Headers = {}): CaseRequest => ({
    headers: { ...asMergePatch, ...headers },
    body,
  });
  const path = (id: number | string) => `/v1/pets/${id}`;

  /** The id the next pet created gets: both servers start from the same seeded catalogue. */
  let lastId = SEEDED_PETS;
  /** A case adding a pet named Rex in category 3 with `status` (none when absent), and its id. */
  const add = (status?: string): [ParityCase, number] => {
    lastId += 1;
    const body = { name: 'Rex', categoryId: 3, ...(status && { status }) };
    return [
      [`add pet ${lastId} (${status ?? 'no status'})`, 201, 'POST', '/v1/pets', json(body)],
      lastId,
    ];
  };
  const read = (id: number, what = 'read it back'): ParityCase => [
    `${what}: pet ${id}`,
    200,
    'GET',
    path(id),
    { headers: auth },
  ];

  /** The lifecycle table of docs/api-design.md, written out as the test's own expectation. */
  const ALLOWED: Record<string, string[]> = {
    none: ['available', 'pending', 'sold'],
    available: ['pending', 'sold'],
    pending: ['available', 'sold'],
    sold: [],
  };
  const STATUSES = ['available', 'pending', 'sold'];

  const transitions: ParityCase[] = ['none', ...STATUSES].flatMap((from) =>
    STATUSES.flatMap((to) => {
      const [adding, id] = add(from === 'none' ? undefined : from);
      const status = ALLOWED[from].includes(to) ? 200 : 409;
      return [
        adding,
        [`${from} → ${to}`, status, 'PATCH', path(id), patch({ status: to })],
        read(id, `${from} → ${to} stored`),
      ] satisfies ParityCase[];
    }),
  );

  const [addRenamed, renamed] = add('pending');
  const changes: ParityCase[] = [
    addRenamed,
    ['a new name, status kept', 200, 'PATCH', path(renamed), patch({ name: 'Max' })],
    [
      'name and the largest categoryId',
      200,
      'PATCH',
      path(renamed),
      patch({ categoryId: MAX_ID, name: 'Bella' }),
    ],
    [
      'a patch that changes nothing: same ETag',
      200,
      'PATCH',
      path(renamed),
      patch({ name: 'Bella', categoryId: MAX_ID }),
    ],
    ['back to an earlier name: a new ETag', 200, 'PATCH', path(renamed), patch({ name: 'Max' })],
    read(renamed),
    ['a seeded pet without a status keeps none', 200, 'PATCH', path(2), patch({ name: 'Max' })],
    [
      'a seeded pet with odd characters in its name',
      200,
      'PATCH',
      path(3),
      patch({ categoryId: 9 }),
    ],
    ['255 emoji', 200, 'PATCH', path(renamed), patch({ name: '🐈'.repeat(255) })],
    [
      'as application/json with a charset',
      200,
      'PATCH',
      path(renamed),
      {
        headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
        body: '{"name":"Json"}',
      },
    ],
    [
      'as a merge patch in capitals with a charset',
      200,
      'PATCH',
      path(renamed),
      rawPatch('{"name":"Patch"}', {
        'content-type': 'Application/Merge-Patch+JSON; charset=utf-8',
      }),
    ],
    [
      'Content-Encoding identity',
      200,
      'PATCH',
      path(renamed),
      rawPatch('{"categoryId":4}', { 'content-encoding': 'identity' }),
    ],
    read(renamed),
  ];

  const [addMatched, matched] = add('available');
  const [addOther, other] = add('available');
  const [addSold, sold] = add('sold');
  const conditions: ParityCase[] = [
    addMatched,
    addOther,
    addSold,
    [
      'If-Match with the current ETag',
      200,
      'PATCH',
      path(matched),
      patch({ name: 'Max' }, { 'if-match': `"${matched}-1"` }),
    ],
    ['If-Match *', 200, 'PATCH', path(matched), patch({ name: 'Rex' }, { 'if-match': '*' })],
    [
      'If-Match listing the current ETag among others',
      200,
      'PATCH',
      path(matched),
      patch({ name: 'Max' }, { 'if-match': `"${matched}-7", W/"x", "${matched}-3"` }),
    ],
    [
      'If-Match sent twice, the second naming the current ETag',
      200,
      'PATCH',
      path(matched),
      patch({ name: 'Rex' }, { 'if-match': ['"0-0"', `"${matched}-4"`] }),
    ],
    [
      'a stale If-Match',
      412,
      'PATCH',
      path(matched),
      patch({ status: 'sold' }, { 'if-match': `"${matched}-1"` }),
    ],
    [
      'the current ETag, weak: never matches',
      412,
      'PATCH',
      path(matched),
      patch({ status: 'sold' }, { 'if-match': `W/"${matched}-5"` }),
    ],
    [
      "another pet's ETag",
      412,
      'PATCH',
      path(matched),
      patch({ name: 'Max' }, { 'if-match': `"${other}-1"` }),
    ],
    ...['', ' , ', 'abc', '"1-1" x', 'W/ "1-1"', '*, "1-1"'].map((ifMatch): ParityCase => [
      `a malformed If-Match ${JSON.stringify(ifMatch)}`,
      400,
      'PATCH',
      path(matched),
      patch({ name: 'Max' }, { 'if-match': ifMatch }),
    ]),
    read(matched, 'unchanged by the refusals'),
    [
      'getPet: If-None-Match with the current strong ETag',
      304,
      'GET',
      path(matched),
      { headers: { ...auth, 'if-none-match': `"${matched}-5"` } },
    ],
    [
      'getPet: If-None-Match with its weak form',
      304,
      'GET',
      path(matched),
      { headers: { ...auth, 'if-none-match': `W/"${matched}-5"` } },
    ],
    [
      'getPet: If-None-Match with an earlier ETag',
      200,
      'GET',
      path(matched),
      { headers: { ...auth, 'if-none-match': `"${matched}-1"` } },
    ],
    [
      '412 before 409: a stale tag on a refused transition',
      412,
      'PATCH',
      path(sold),
      patch({ status: 'available' }, { 'if-match': '"0-0"' }),
    ],
    [
      '409 with the current tag',
      409,
      'PATCH',
      path(sold),
      patch({ status: 'available' }, { 'if-match': `"${sold}-1"` }),
    ],
    [
      '404 before 412: an unknown pet with a stale tag',
      404,
      'PATCH',
      path(MAX_ID),
      patch({ status: 'sold' }, { 'if-match': '"0-0"' }),
    ],
    [
      '404 for an unknown pet, even with If-Match *',
      404,
      'PATCH',
      path(MAX_ID),
      patch({ status: 'sold' }, { 'if-match': '*' }),
    ],
    ['404 for an unknown pet', 404, 'PATCH', path(MAX_ID - 1), patch({ name: 'Max' })],
  ];

  const [addTarget, target] = add('available');
  const NAME = { name: 'Max' };
  const badInput: ParityCase[] = [
    addTarget,
    ...(
      [
        ['body null', 'null'],
        ['a string', '"Max"'],
        ['a number', '5'],
        ['an empty object', '{}'],
        ['an empty array', '[]'],
        ['an array holding a patch', '[{"name":"Max"}]'],
        ['name null', '{"name":null}'],
        ['categoryId null', '{"categoryId":null}'],
        ['status null: a status cannot be removed', '{"status":null}'],
        ['name empty', '{"name":""}'],
        ['name blank', '{"name":" \\t"}'],
        ['name of 256 characters', JSON.stringify({ name: 'x'.repeat(256) })],
        ['name with U+0000', '{"name":"a\\u0000b"}'],
        ['name with an unpaired surrogate', '{"name":"Rex\\ud800"}'],
        ['name a number', '{"name":42}'],
        ['categoryId 0', '{"categoryId":0}'],
        ['categoryId a fraction', '{"categoryId":1.5}'],
        ['categoryId a string', '{"categoryId":"1"}'],
        ['categoryId true', '{"categoryId":true}'],
        ['categoryId past 2^53-1', '{"categoryId":9007199254740992}'],
        ['status unknown', '{"status":"lost"}'],
        ['status in capitals', '{"status":"SOLD"}'],
        ['status a number', '{"status":1}'],
        ['unknown member id', '{"id":7}'],
        ['unknown member revision beside a valid one', '{"revision":7,"name":"Max"}'],
        ['an unknown member beside a valid one', '{"name":"Max","colour":"red"}'],
        ['an own __proto__', '{"__proto__":{"name":"Max"},"name":"Max"}'],
        [
          'dropped members first, then unknown ones, then wrong values',
          '{"toString":1,"name":"","__proto__":1,"q":1,"categoryId":null,"status":null}',
        ],
        ['a repeated member, the last one wrong', '{"name":"Max","name":5}'],
        ['broken JSON', '{"name":'],
        ['JSON with a trailing comma', '{"name":"Max",}'],
        ['single quotes', "{'name':'Max'}"],
        ['nul', 'nul'],
        ['too deeply nested', `${'['.repeat(40)}${']'.repeat(40)}`],
      ] as const
    ).map(([what, body]): ParityCase => [what, 400, 'PATCH', path(target), rawPatch(body)]),
    [
      'bytes that are not UTF-8',
      400,
      'PATCH',
      path(target),
      rawPatch(Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])),
    ],
    ['an empty body', 400, 'PATCH', path(target), rawPatch('')],
    ['no body and no content type', 400, 'PATCH', path(target), { headers: auth }],
    ...['text/plain', 'application/x-www-form-urlencoded', 'application/json-patch+json'].map(
      (type): ParityCase => [
        `Content-Type ${type}: 415 with Accept-Patch`,
        415,
        'PATCH',
        path(target),
        rawPatch('{"name":"Max"}', { 'content-type': type }),
      ],
    ),
    [
      'a body without content type',
      415,
      'PATCH',
      path(target),
      { headers: auth, body: '{"name":"Max"}' },
    ],
    [
      'a compressed body',
      415,
      'PATCH',
      path(target),
      rawPatch('{"name":"Max"}', { 'content-encoding': 'gzip' }),
    ],
    ['a body over the limit', 413, 'PATCH', path(target), patch({ name: 'x'.repeat(20_000) })],
    [
      'createPet still takes application/json only',
      415,
      'POST',
      '/v1/pets',
      { headers: asMergePatch, body: '{"name":"Max","categoryId":1}' },
    ],
    read(target, 'unchanged by all of them'),
  ];

  const ids: ParityCase[] = [
    ...['007', 'abc', '0', '9007199254740992', '1e3'].map((id): ParityCase => [
      `id ${id}`,
      400,
      'PATCH',
      path(id),
      patch(NAME),
    ]),
    ['an id too long to route', 400, 'PATCH', path('1'.repeat(300)), patch(NAME)],
    ['a trailing slash', 404, 'PATCH', '/v1/pets/', patch(NAME)],
    ['a path below a pet', 404, 'PATCH', `${path(1)}/owner`, patch(NAME)],
    // Among the 400s the service reports If-Match, then the body, then the id.
    ['a bad id and a bad body: the body', 400, 'PATCH', path('007'), rawPatch('{"x":1}')],
    ['a bad id and broken JSON: the JSON', 400, 'PATCH', path('007'), rawPatch('{bad')],
    [
      'a bad id and a wrong content type: 415',
      415,
      'PATCH',
      path('007'),
      rawPatch('x', { 'content-type': 'text/plain' }),
    ],
    [
      'a bad id, a bad body and a malformed If-Match: the If-Match',
      400,
      'PATCH',
      path('007'),
      rawPatch('{bad', { 'if-match': 'bad' }),
    ],
    [
      'a wrong content type and a malformed If-Match: the If-Match',
      400,
      'PATCH',
      path(target),
      rawPatch('x', { 'content-type': 'text/plain', 'if-match': 'bad' }),
    ],
  ];

  const READ_ONLY = { authorization: 'Bearer READ_ONLY_KEY' };
  const keys: ParityCase[] = [
    [
      'no key, a broken body and a wrong content type: 401',
      401,
      'PATCH',
      path(target),
      { headers: { 'content-type': 'text/plain' }, body: '{broken' },
    ],
    [
      'a revoked key',
      401,
      'PATCH',
      path(target),
      { ...patch(NAME), headers: { ...asMergePatch, authorization: 'Bearer REVOKED_KEY' } },
    ],
    [
      'no key and a body over the limit: 413 first',
      413,
      'PATCH',
      path(target),
      { headers: { 'content-type': 'application/merge-patch+json' }, body: 'x'.repeat(16_385) },
    ],
    ...(
      [
        ['a valid patch', '{"status":"sold"}', 'application/merge-patch+json', {}],
        ['broken JSON', '{broken', 'application/merge-patch+json', {}],
        ['a wrong content type', '{"status":"sold"}', 'text/plain', {}],
        ['a malformed If-Match', '{"status":"sold"}', 'application/json', { 'if-match': 'x' }],
      ] as const
    ).map(([what, body, type, more]): ParityCase => [
      `a pets:read key and ${what}: 403 naming pets:write`,
      403,
      'PATCH',
      path(target),
      { headers: { ...READ_ONLY, 'content-type': type, ...more }, body },
    ]),
    [
      'a pets:read key on an unknown pet: 403',
      403,
      'PATCH',
      path(MAX_ID),
      { headers: { ...READ_ONLY, 'content-type': 'application/json' }, body: '{"name":"Max"}' },
    ],
    [
      'a pets:read key on a malformed id: 403',
      403,
      'PATCH',
      path('007'),
      { headers: { ...READ_ONLY, 'content-type': 'application/json' }, body: '{"name":"Max"}' },
    ],
    [
      'a pets:read key cannot createPet either',
      403,
      'POST',
      '/v1/pets',
      {
        headers: { ...READ_ONLY, 'content-type': 'application/json' },
        body: '{"name":"Max","categoryId":1}',
      },
    ],
    ['a pets:read key reads the pet', 200, 'GET', path(target), { headers: READ_ONLY }],
    ['a pets:read key lists pets', 200, 'GET', '/v1/pets?limit=1', { headers: READ_ONLY }],
    [
      'no Host header: no deprecation headers, as on getPet',
      400,
      'PATCH',
      path(target),
      { ...patch(NAME), setHost: false },
    ],
    [
      'OPTIONS a pet: Allow lists DELETE and PATCH',
      405,
      'OPTIONS',
      path(target),
      { headers: auth },
    ],
    ['PUT a pet', 405, 'PUT', path(target), { headers: asJson, body: '{}' }],
  ];

  // Run in this order, so the pets created get the same ids on both; the expected status keeps
  // each case meaning what it says. The last case compares what each stored.
  const cases: ParityCase[] = [
    ...transitions,
    ...changes,
    ...conditions,
    ...badInput,
    ...ids,
    ...keys,
    [
      'the whole catalogue, changed pets included',
      200,
      'GET',
      '/v1/pets?limit=100',
      { headers: auth },
    ],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-patch-${n}`);
    },
  );
});
