import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  asJson,
  auth,
  gzipped,
  json,
  MAX_ID,
  raw,
  startParityPair,
  type ParityCase,
  type ParityPair,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * createPet (POST /v1/pets): valid pets, every field rule, bodies that are not JSON or not UTF-8,
 * content types and codings, the body limit, and which refusal comes first. The pets created get
 * the same ids on both servers; the last case lists the catalogue to compare what was stored.
 */
describe.each(ENGINES)('bench reference answers createPet as the service does [%s]', (engine) => {
  let pair: ParityPair;

  beforeAll(async () => {
    pair = await startParityPair(engine);
  });
  afterAll(() => pair?.stop());

  // Run in this order, so the pets created get the same ids on both; the expected status keeps
  // each case meaning what it says.
  const cases: ParityCase[] = [
    [
      'all fields',
      201,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 7, status: 'available' }),
    ],
    ['no status', 201, 'POST', '/v1/pets', json({ name: 'Tom', categoryId: 2 })],
    [
      'largest categoryId, 255 emoji, charset, a query',
      201,
      'POST',
      '/v1/pets?ignored=1',
      {
        headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ status: 'sold', categoryId: MAX_ID, name: '🐈'.repeat(255) }),
      },
    ],
    ['name missing', 400, 'POST', '/v1/pets', json({ categoryId: 1 })],
    ['name blank', 400, 'POST', '/v1/pets', json({ name: ' \t\n\u00a0', categoryId: 1 })],
    [
      'name of 256 characters',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'x'.repeat(256), categoryId: 1 }),
    ],
    ['name with U+0000', 400, 'POST', '/v1/pets', json({ name: 'Re\u0000x', categoryId: 1 })],
    [
      'name with an unpaired surrogate',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex\\ud800","categoryId":1}'),
    ],
    ['name a number', 400, 'POST', '/v1/pets', json({ name: 5, categoryId: 1 })],
    ['categoryId a string', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: '1' })],
    ['categoryId a fraction', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: 1.5 })],
    ['categoryId 0', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: 0 })],
    [
      'categoryId past 2^53-1',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex","categoryId":9007199254740992}'),
    ],
    ['categoryId null', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: null })],
    ['status null', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: 1, status: null })],
    [
      'status unknown',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1, status: 'lost' }),
    ],
    ['unknown field id', 400, 'POST', '/v1/pets', json({ id: 1, name: 'Rex', categoryId: 1 })],
    [
      'unknown fields among other errors',
      400,
      'POST',
      '/v1/pets',
      json({ colour: 'b', categoryId: '1', status: 'x', size: 2 }),
    ],
    [
      '__proto__ field',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex","categoryId":1,"__proto__":{"a":1}}'),
    ],
    [
      'constructor field after an unknown one',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1, colour: 1, constructor: 1 }),
    ],
    [
      'dropped fields named first, then unknown ones, then wrong values',
      400,
      'POST',
      '/v1/pets',
      raw('{"colour":1,"toString":2,"__proto__":3,"prototype":4,"categoryId":"1"}'),
    ],
    [
      'field names quoted when they would vanish in the message',
      400,
      'POST',
      '/v1/pets',
      raw(
        '{"name":"Rex","categoryId":1,"":1,"a b":2,"tab\\t":3,"say \\"hi\\"":4,"nbsp\\u00a0":5,' +
          '"zwsp\\u200b":6,"lone\\ud800":7,"ünï🐶":8,"9":9}',
      ),
    ],
    ['a number', 400, 'POST', '/v1/pets', raw('42')],
    ['null', 400, 'POST', '/v1/pets', raw('null')],
    ['empty body', 400, 'POST', '/v1/pets', raw('')],
    ['no body and no content type', 400, 'POST', '/v1/pets', { headers: auth }],
    ['malformed JSON', 400, 'POST', '/v1/pets', raw('{"name":')],
    ['JSON with a trailing comma', 400, 'POST', '/v1/pets', raw('{"name":"Rex",}')],
    [
      'too deeply nested',
      400,
      'POST',
      '/v1/pets',
      raw(`{"name":${'['.repeat(40)}${']'.repeat(40)}}`),
    ],
    [
      'bytes that are not UTF-8',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from([...Buffer.from('{"name":"Re'), 0xff, ...Buffer.from('x","categoryId":1}')])),
    ],
    [
      'an encoded surrogate (CESU-8) is not UTF-8',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from([...Buffer.from('{"name":"Re'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')])),
    ],
    [
      'a byte order mark',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from(`\ufeff${JSON.stringify({ name: 'Rex', categoryId: 1 })}`)),
    ],
    [
      'a compressed body',
      415,
      'POST',
      '/v1/pets',
      { headers: gzipped, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'an encoding and bytes that are not UTF-8: the encoding first',
      415,
      'POST',
      '/v1/pets',
      { headers: gzipped, body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]) },
    ],
    ['an encoding on an empty body', 400, 'POST', '/v1/pets', { headers: gzipped, body: '' }],
    [
      'text/plain and an encoding: the media type first',
      415,
      'POST',
      '/v1/pets',
      {
        headers: { ...auth, 'content-type': 'text/plain', 'content-encoding': 'gzip' },
        body: 'x',
      },
    ],
    [
      'no key and a compressed body: 401 first',
      401,
      'POST',
      '/v1/pets',
      {
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: '{}',
      },
    ],
    [
      'a Content-Type that is no media type counts as none',
      415,
      'POST',
      '/v1/pets',
      { headers: { ...auth, 'content-type': 'json' }, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'no key and a Content-Type that is no media type: 401 first',
      401,
      'POST',
      '/v1/pets',
      { headers: { 'content-type': 'application/' }, body: '{}' },
    ],
    [
      'text/plain',
      415,
      'POST',
      '/v1/pets',
      { headers: { ...auth, 'content-type': 'text/plain' }, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'application/jsonp',
      415,
      'POST',
      '/v1/pets',
      { headers: { ...auth, 'content-type': 'application/jsonp' }, body: '{}' },
    ],
    [
      'a body without content type',
      415,
      'POST',
      '/v1/pets',
      { headers: auth, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'body over the limit',
      413,
      'POST',
      '/v1/pets',
      json({ name: 'x'.repeat(16_384), categoryId: 1 }),
    ],
    [
      'Content-Encoding identity, any case and padded',
      201,
      'POST',
      '/v1/pets',
      {
        headers: { ...asJson, 'content-encoding': ' Identity ' },
        body: '{"name":"Ida","categoryId":3}',
      },
    ],
    [
      'an expectation the server does not know is ignored',
      201,
      'POST',
      '/v1/pets',
      { headers: { ...asJson, expect: 'party' }, body: '{"name":"Exp","categoryId":4}' },
    ],
    // the catalogue after the creates above
    [
      'the whole catalogue, created pets included',
      200,
      'GET',
      '/v1/pets?limit=100',
      { headers: auth },
    ],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, ...parityCase) => {
      await pair.expectSameAnswer(parityCase, `parity-create-${n}`);
    },
  );
});
