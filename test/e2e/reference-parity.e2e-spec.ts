import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runApiKeyCli,
  startReference,
  startServer,
  waitFor,
  type ServerProcess,
} from '../support/processes.js';
import { exchange, parseResponses } from '../support/raw-http.js';

/**
 * The benchmark's reference implementation (bench/reference) must answer exactly as the service
 * does, or the race between them measures different work. Both get the same requests, in the same
 * order, on copies of one database; status, body and the headers that carry meaning must match.
 */
describe('bench reference parity with the service [sqlite]', () => {
  let dir: string;
  let service: ServerProcess;
  let reference: ServerProcess;
  let key: string;
  let revokedKey: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'animal-store-parity-'));
    const servicePath = join(dir, 'service.sqlite');
    const databaseUrl = `sqlite:${servicePath}`;
    // The service migrates its file; NODE_ENV=production so it creates no key of its own.
    service = await startServer({
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      // The reference has no rate limiter (the bench runs both without one).
      RATE_LIMIT_PER_MINUTE: '0',
    });
    key = (await runApiKeyCli(['create', 'parity'], databaseUrl)).stdout.trim();
    revokedKey = (await runApiKeyCli(['create', 'revoked'], databaseUrl)).stdout.trim();
    const revokedId = /^(\d+)\s+revoked\s/m.exec(
      (await runApiKeyCli(['list'], databaseUrl)).stdout,
    )![1];
    // Revoked before either server has seen it, so neither has it in its verified-key cache.
    expect((await runApiKeyCli(['revoke', revokedId], databaseUrl)).code).toBe(0);

    // Equal starting data, then an exact copy (same rows, same AUTOINCREMENT counter) for the reference.
    const db = new Database(servicePath);
    const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)');
    const statuses = ['available', 'sold', null, 'pending', 'sold'];
    for (let i = 1; i <= 25; i++)
      insert.run(i === 3 ? 'Ünïcødé 🐶 "quoted" \\ \n' : `pet ${i}`, (i % 4) + 1, statuses[i % 5]);
    await db.backup(join(dir, 'reference.sqlite'));
    db.close();

    reference = await startReference({
      DATABASE_PATH: join(dir, 'reference.sqlite'),
      LOG_LEVEL: 'info',
    });
  });

  afterAll(async () => {
    service?.child.kill('SIGKILL');
    reference?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  // Keys exist only once the database does: cases name them, withKeys() puts them in at send time.
  const auth = { authorization: 'Bearer KEY' };
  const asJson = { ...auth, 'content-type': 'application/json' };
  const json = (body: unknown) => ({ headers: asJson, body: JSON.stringify(body) });
  const raw = (body: string | Buffer) => ({ headers: asJson, body });
  const gzipped = { ...asJson, 'content-encoding': 'gzip' };
  const MAX_ID = 9007199254740991;

  // [case, status the service must answer, method, path, request]. Run in this order, so the pets
  // created get the same ids on both; the expected status keeps each case meaning what it says.
  const cases: [string, number, string, string, Request][] = [
    // listPets
    ['list, default page with a next link', 200, 'GET', '/v1/pets', { headers: auth }],
    ['list, limit=5', 200, 'GET', '/v1/pets?limit=5', { headers: auth }],
    [
      'list, limit=100: the whole catalogue, no next link',
      200,
      'GET',
      '/v1/pets?limit=100',
      { headers: auth },
    ],
    [
      'list, status filter kept in the next link',
      200,
      'GET',
      '/v1/pets?status=sold&limit=2',
      { headers: auth },
    ],
    [
      'list, following a cursor',
      200,
      'GET',
      `/v1/pets?limit=5&cursor=${cursor(5)}`,
      { headers: auth },
    ],
    [
      'list, cursor and status',
      200,
      'GET',
      `/v1/pets?status=sold&limit=2&cursor=${cursor(4)}`,
      { headers: auth },
    ],
    ['list, last page', 200, 'GET', `/v1/pets?limit=10&cursor=${cursor(20)}`, { headers: auth }],
    [
      'list, cursor past the end',
      200,
      'GET',
      `/v1/pets?cursor=${cursor(MAX_ID)}`,
      { headers: auth },
    ],
    ['list, limit=0', 400, 'GET', '/v1/pets?limit=0', { headers: auth }],
    ['list, limit=101', 400, 'GET', '/v1/pets?limit=101', { headers: auth }],
    ['list, limit empty', 400, 'GET', '/v1/pets?limit=', { headers: auth }],
    ['list, limit=05', 400, 'GET', '/v1/pets?limit=05', { headers: auth }],
    ['list, limit=1.5', 400, 'GET', '/v1/pets?limit=1.5', { headers: auth }],
    ['list, limit twice', 400, 'GET', '/v1/pets?limit=1&limit=2', { headers: auth }],
    ['list, unknown status', 400, 'GET', '/v1/pets?status=lost', { headers: auth }],
    ['list, status twice', 400, 'GET', '/v1/pets?status=sold&status=sold', { headers: auth }],
    ['list, garbage cursor', 400, 'GET', '/v1/pets?cursor=garbage!', { headers: auth }],
    [
      'list, non-canonical cursor after:0',
      400,
      'GET',
      '/v1/pets?cursor=YWZ0ZXI6MA',
      { headers: auth },
    ],
    ['list, empty cursor', 400, 'GET', '/v1/pets?cursor=', { headers: auth }],
    ['list, unknown parameter', 400, 'GET', '/v1/pets?colour=brown', { headers: auth }],
    ['list, __proto__ parameter', 400, 'GET', '/v1/pets?__proto__=x', { headers: auth }],
    [
      'list, toString parameter after a valid one',
      400,
      'GET',
      '/v1/pets?limit=5&toString=1',
      { headers: auth },
    ],
    [
      'list, dropped parameters named first, then unknown ones, then wrong values',
      400,
      'GET',
      '/v1/pets?colour=1&constructor=2&limit=0&valueOf=3&prototype=4',
      { headers: auth },
    ],
    [
      'list, parameter names quoted when they would vanish in the message',
      400,
      'GET',
      '/v1/pets?=1&a%20b=2&x%00=3&%22q%22=4&%C3%BC=5',
      { headers: auth },
    ],
    [
      'list, every parameter wrong',
      400,
      'GET',
      '/v1/pets?cursor=x&b=1&status=y&limit=0&a=2',
      { headers: auth },
    ],
    ['list, HEAD', 200, 'HEAD', '/v1/pets?limit=2', { headers: auth }],
    // authentication
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
    // createPet
    [
      'create, all fields',
      201,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 7, status: 'available' }),
    ],
    ['create, no status', 201, 'POST', '/v1/pets', json({ name: 'Tom', categoryId: 2 })],
    [
      'create, largest categoryId, 255 emoji, charset, a query',
      201,
      'POST',
      '/v1/pets?ignored=1',
      {
        headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ status: 'sold', categoryId: MAX_ID, name: '🐈'.repeat(255) }),
      },
    ],
    ['create, name missing', 400, 'POST', '/v1/pets', json({ categoryId: 1 })],
    ['create, name blank', 400, 'POST', '/v1/pets', json({ name: ' \t\n\u00a0', categoryId: 1 })],
    [
      'create, name of 256 characters',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'x'.repeat(256), categoryId: 1 }),
    ],
    [
      'create, name with U+0000',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Re\u0000x', categoryId: 1 }),
    ],
    [
      'create, name with an unpaired surrogate',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex\\ud800","categoryId":1}'),
    ],
    ['create, name a number', 400, 'POST', '/v1/pets', json({ name: 5, categoryId: 1 })],
    [
      'create, categoryId a string',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: '1' }),
    ],
    [
      'create, categoryId a fraction',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1.5 }),
    ],
    ['create, categoryId 0', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: 0 })],
    [
      'create, categoryId past 2^53-1',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex","categoryId":9007199254740992}'),
    ],
    ['create, categoryId null', 400, 'POST', '/v1/pets', json({ name: 'Rex', categoryId: null })],
    [
      'create, status null',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1, status: null }),
    ],
    [
      'create, status unknown',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1, status: 'lost' }),
    ],
    [
      'create, unknown field id',
      400,
      'POST',
      '/v1/pets',
      json({ id: 1, name: 'Rex', categoryId: 1 }),
    ],
    [
      'create, unknown fields among other errors',
      400,
      'POST',
      '/v1/pets',
      json({ colour: 'b', categoryId: '1', status: 'x', size: 2 }),
    ],
    [
      'create, __proto__ field',
      400,
      'POST',
      '/v1/pets',
      raw('{"name":"Rex","categoryId":1,"__proto__":{"a":1}}'),
    ],
    [
      'create, constructor field after an unknown one',
      400,
      'POST',
      '/v1/pets',
      json({ name: 'Rex', categoryId: 1, colour: 1, constructor: 1 }),
    ],
    [
      'create, dropped fields named first, then unknown ones, then wrong values',
      400,
      'POST',
      '/v1/pets',
      raw('{"colour":1,"toString":2,"__proto__":3,"prototype":4,"categoryId":"1"}'),
    ],
    [
      'create, field names quoted when they would vanish in the message',
      400,
      'POST',
      '/v1/pets',
      raw(
        '{"name":"Rex","categoryId":1,"":1,"a b":2,"tab\\t":3,"say \\"hi\\"":4,"nbsp\\u00a0":5,' +
          '"zwsp\\u200b":6,"lone\\ud800":7,"ünï🐶":8,"9":9}',
      ),
    ],
    ['create, a number', 400, 'POST', '/v1/pets', raw('42')],
    ['create, null', 400, 'POST', '/v1/pets', raw('null')],
    ['create, empty body', 400, 'POST', '/v1/pets', raw('')],
    ['create, no body and no content type', 400, 'POST', '/v1/pets', { headers: auth }],
    ['create, malformed JSON', 400, 'POST', '/v1/pets', raw('{"name":')],
    ['create, JSON with a trailing comma', 400, 'POST', '/v1/pets', raw('{"name":"Rex",}')],
    [
      'create, too deeply nested',
      400,
      'POST',
      '/v1/pets',
      raw(`{"name":${'['.repeat(40)}${']'.repeat(40)}}`),
    ],
    [
      'create, bytes that are not UTF-8',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from([...Buffer.from('{"name":"Re'), 0xff, ...Buffer.from('x","categoryId":1}')])),
    ],
    [
      'create, an encoded surrogate (CESU-8) is not UTF-8',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from([...Buffer.from('{"name":"Re'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')])),
    ],
    [
      'create, a byte order mark',
      400,
      'POST',
      '/v1/pets',
      raw(Buffer.from(`\ufeff${JSON.stringify({ name: 'Rex', categoryId: 1 })}`)),
    ],
    [
      'create, a compressed body',
      415,
      'POST',
      '/v1/pets',
      { headers: gzipped, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'create, an encoding and bytes that are not UTF-8: the encoding first',
      415,
      'POST',
      '/v1/pets',
      { headers: gzipped, body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]) },
    ],
    [
      'create, an encoding on an empty body',
      400,
      'POST',
      '/v1/pets',
      { headers: gzipped, body: '' },
    ],
    [
      'create, text/plain and an encoding: the media type first',
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
      'create, a Content-Type that is no media type counts as none',
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
      'create, text/plain',
      415,
      'POST',
      '/v1/pets',
      { headers: { ...auth, 'content-type': 'text/plain' }, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'create, application/jsonp',
      415,
      'POST',
      '/v1/pets',
      { headers: { ...auth, 'content-type': 'application/jsonp' }, body: '{}' },
    ],
    [
      'create, a body without content type',
      415,
      'POST',
      '/v1/pets',
      { headers: auth, body: '{"name":"Rex","categoryId":1}' },
    ],
    [
      'create, body over the limit',
      413,
      'POST',
      '/v1/pets',
      json({ name: 'x'.repeat(16_384), categoryId: 1 }),
    ],
    [
      'create, Content-Encoding identity, any case and padded',
      201,
      'POST',
      '/v1/pets',
      {
        headers: { ...asJson, 'content-encoding': ' Identity ' },
        body: '{"name":"Ida","categoryId":3}',
      },
    ],
    [
      'create, an expectation the server does not know is ignored',
      201,
      'POST',
      '/v1/pets',
      { headers: { ...asJson, expect: 'party' }, body: '{"name":"Exp","categoryId":4}' },
    ],
    // getPet
    ['get, a pet with a status', 200, 'GET', '/v1/pets/2', { headers: auth }],
    [
      'get, a pet without a status, odd characters in its name',
      200,
      'GET',
      '/v1/pets/3',
      { headers: auth },
    ],
    ['get, the pet created without a status', 200, 'GET', '/v1/pets/27', { headers: auth }],
    ['get, absent', 404, 'GET', `/v1/pets/${MAX_ID}`, { headers: auth }],
    ['get, id abc', 400, 'GET', '/v1/pets/abc', { headers: auth }],
    ['get, id 0', 400, 'GET', '/v1/pets/0', { headers: auth }],
    ['get, id 007', 400, 'GET', '/v1/pets/007', { headers: auth }],
    ['get, id 2^53', 400, 'GET', '/v1/pets/9007199254740992', { headers: auth }],
    ['get, id 1e3', 400, 'GET', '/v1/pets/1e3', { headers: auth }],
    ['get, no key', 401, 'GET', '/v1/pets/1', {}],
    ['get, HEAD', 200, 'HEAD', '/v1/pets/1', { headers: auth }],
    ['get, an id too long to route', 400, 'GET', `/v1/pets/${'1'.repeat(300)}`, { headers: auth }],
    ['get, bad percent-encoding', 400, 'GET', '/v1/pets/%E0%A4%A', { headers: auth }],
    // routing and hygiene
    ['unknown path', 404, 'GET', '/v1/nothing', { headers: auth }],
    ['trailing slash', 404, 'GET', '/v1/pets/', { headers: auth }],
    ['path below a pet', 404, 'GET', '/v1/pets/1/owner', {}],
    ['DELETE a pet', 405, 'DELETE', '/v1/pets/1', { headers: auth }],
    ['PUT a pet, no key', 405, 'PUT', '/v1/pets/1', {}],
    ['PATCH the collection', 405, 'PATCH', '/v1/pets', { headers: auth }],
    ['OPTIONS the collection', 405, 'OPTIONS', '/v1/pets', {}],
    ['POST a health probe', 405, 'POST', '/health/live', {}],
    ['liveness', 200, 'GET', '/health/live', {}],
    ['no Host header', 400, 'GET', '/v1/pets', { headers: auth, setHost: false }],
    [
      'no Host header on getPet: its deprecation headers too',
      400,
      'GET',
      '/v1/pets/1',
      { headers: auth, setHost: false },
    ],
    [
      'no Host header before the body is read',
      400,
      'POST',
      '/v1/pets',
      { headers: asJson, body: 'x'.repeat(16_385), setHost: false },
    ],
    ['no Host header on an unknown path', 400, 'GET', '/v1/nothing', { setHost: false }],
    [
      'two Host headers',
      400,
      'GET',
      '/v1/pets',
      { headers: { ...auth, host: ['localhost', 'localhost'] } },
    ],
    [
      'an unknown path with a Content-Type that is no media type',
      404,
      'POST',
      '/v1/nothing',
      { headers: { 'content-type': 'nonsense' }, body: '{}' },
    ],
    [
      'DELETE a pet with a Content-Type that is no media type',
      405,
      'DELETE',
      '/v1/pets/1',
      { headers: { 'content-type': 'nonsense' }, body: '{}' },
    ],
    ['DELETE the collection, percent-encoded', 405, 'DELETE', '/v1/%70ets', {}],
    ['DELETE the collection with a fragment', 405, 'DELETE', '/v1/pets#top', {}],
    ['DELETE a pet in absolute form', 405, 'DELETE', 'http://localhost/v1/pets/1?x=1', {}],
    ['DELETE, absolute form, scheme in capitals', 405, 'DELETE', 'HTTP://localhost/v1/pets', {}],
    ['DELETE the root in absolute form', 404, 'DELETE', 'http://localhost', {}],
    ['DELETE a pet id holding an encoded slash', 405, 'DELETE', '/v1/pets/a%2Fb', {}],
    ['list in absolute form', 200, 'GET', 'http://localhost/v1/pets?limit=1', { headers: auth }],
    ['a generated request id', 200, 'GET', '/v1/pets?limit=1', { headers: auth, requestId: null }],
    [
      'an insane request id is replaced',
      200,
      'GET',
      '/v1/pets?limit=1',
      { headers: { ...auth, 'x-request-id': 'has space' }, requestId: null },
    ],
    // the catalogue after all of the above
    ['list, everything at the end', 200, 'GET', '/v1/pets?limit=100', { headers: auth }],
  ];

  it.each(cases.map((c, i) => [i + 1, ...c] as const))(
    '%i. %s: %i for %s %s',
    async (n, _case, status, method, path, options) => {
      const headers = withKeys(options.headers ?? {});
      if (options.requestId !== null && !('x-request-id' in headers))
        headers['x-request-id'] = `parity-${n}`;
      const sent: Sent = { method, path, headers, body: options.body, setHost: options.setHost };

      const fromService = await send(service.baseUrl, sent);
      const fromReference = await send(reference.baseUrl, sent);

      expect(fromService.status).toBe(status);
      expect({ status: fromReference.status, body: fromReference.body }).toEqual({
        status: fromService.status,
        body: fromService.body,
      });
      expect(pick(fromReference.headers)).toEqual(pick(fromService.headers));
      expect(fromReference.headers['x-powered-by']).toBeUndefined();
      if (options.requestId === null)
        expect(fromReference.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  // What Node's client cannot send: the same bytes to both on a raw connection, read until the
  // server closes it. [case, statuses the service must answer, bytes]
  const rawCases: [string, number[], string][] = [
    [
      'CONNECT is refused with the Error body',
      [400],
      'CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n',
    ],
    ['HTTP/1.0 needs no Host header', [200], 'GET /health/live HTTP/1.0\r\n\r\n'],
    [
      'a request without Host ends its keep-alive connection',
      [200, 400],
      'GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n' +
        'GET /health/live HTTP/1.1\r\n\r\n' +
        'GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n',
    ],
    ['an unparsable header line', [400], 'GET /health/live HTTP/1.1\r\nHost a\r\n\r\n'],
  ];

  it.each(rawCases)('raw: %s', async (_case, statuses, bytes) => {
    const fromService = parseResponses(await exchange(service.baseUrl, bytes));
    const fromReference = parseResponses(await exchange(reference.baseUrl, bytes));

    expect(fromService.map(({ status }) => status)).toEqual(statuses);
    // Connection counts here: these requests leave keep-alive to the server.
    const meaning = ({ status, body, headers }: Received) => ({
      status,
      body,
      headers: { ...pick(headers), connection: headers.connection },
    });
    expect(fromReference.map(meaning)).toEqual(fromService.map(meaning));
  });

  it('logs one JSON line per request, with the service fields and never a key', async () => {
    await send(reference.baseUrl, {
      method: 'GET',
      path: '/v1/pets?limit=1',
      headers: withKeys({ ...auth, 'x-request-id': 'parity-log' }),
    });
    await waitFor(() => reference.stdout().includes('parity-log'));

    const lines = reference
      .stdout()
      .trim()
      .split('\n')
      .filter((line) => line.includes('parity-log'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({
      level: 'info',
      time: expect.any(String),
      requestId: 'parity-log',
      method: 'GET',
      route: '/v1/pets',
      status: 200,
      durationMs: expect.any(Number),
      msg: 'request',
    });
    expect(reference.stdout()).not.toContain(key);
    expect(reference.stdout().toLowerCase()).not.toContain('authorization');
  });

  it('stops on SIGTERM with exit code 0, its last log line written', async () => {
    await send(reference.baseUrl, {
      method: 'GET',
      path: '/health/live',
      headers: { 'x-request-id': 'parity-last' },
    });
    reference.child.kill('SIGTERM');

    expect(await reference.exited).toBe(0);
    expect(reference.stdout()).toContain('"requestId":"parity-last"');
  });

  /** Puts the real keys in place of the KEY, REVOKED_KEY and TAMPERED_KEY placeholders. */
  function withKeys(headers: Headers): Headers {
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const placeholders: Record<string, string> = {
      KEY: key,
      REVOKED_KEY: revokedKey,
      TAMPERED_KEY: tampered,
    };
    const authorization = (headers.authorization as string | undefined)?.replace(
      /\b(KEY|REVOKED_KEY|TAMPERED_KEY)$/,
      (name) => placeholders[name],
    );
    return { ...headers, ...(authorization !== undefined && { authorization }) };
  }
});

/** The headers whose values carry meaning; the rest (date, keep-alive) may differ. */
const COMPARED_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'x-content-type-options',
  'www-authenticate',
  'allow',
  'link',
  'location',
  'sunset',
  'deprecation',
  'retry-after',
  'accept-encoding',
  'x-powered-by',
] as const;

function pick(headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const picked: Record<string, unknown> = Object.fromEntries(
    COMPARED_HEADERS.map((name) => [name, headers[name]]),
  );
  // Equal when echoed; generated ids differ by design and are checked for shape instead.
  picked['x-request-id'] = /^parity-/.test(String(headers['x-request-id']))
    ? headers['x-request-id']
    : 'generated';
  return picked;
}

function cursor(lastId: number): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

type Headers = Record<string, string | string[]>;

/** A request as a case describes it. */
interface Request {
  headers?: Headers;
  body?: string | Buffer;
  /** null: send no X-Request-Id of our own, so the server generates one. */
  requestId?: null;
  /** false: send no Host header (Node's client adds one otherwise). */
  setHost?: false;
}

interface Sent {
  method: string;
  path: string;
  headers: Headers;
  body?: string | Buffer;
  setHost?: false;
}

interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request over a fresh connection, headers exactly as given (fetch would add a content type);
 * a header given as an array is sent once per value. Node's client adds the Host header (unless
 * setHost is false or the case sends its own) and the length of the body.
 */
function send(baseUrl: string, { method, path, headers, body, setHost }: Sent): Promise<Received> {
  const { hostname, port } = new URL(baseUrl);
  const sentHeaders =
    body === undefined
      ? headers
      : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: hostname, port, method, path, agent: false, setHost },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: text }),
        );
      },
    );
    // Set here, not in the options, which refuse a Host given twice.
    for (const [name, value] of Object.entries(sentHeaders)) outgoing.setHeader(name, value);
    // A server may answer (413) before it has read the whole body; the answer is what counts.
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
