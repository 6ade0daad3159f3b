import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asJson,
  auth,
  json,
  MAX_ID,
  raw,
  readRows,
  send,
  startParityPair,
  type CaseRequest,
  type Headers,
  type ParityCase,
  type ParityPair,
  type Received,
} from '../../support/reference-parity.js';
import { ENGINES } from '../../support/test-database.js';

const HOUR_MS = 3_600_000;
/** The service's ORDER_HOLD_SECONDS when unset, and the reference's. */
const DEFAULT_HOLD_SECONDS = 900;
const ISO_INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

/**
 * createOrder (POST /v1/orders) and completeOrder (POST /v1/orders/{orderId}/complete): holds,
 * sales, each refusal in the service's order, holds past their deadline (seeded an hour back, as
 * the service stores orders), If-Match, bad bodies, ids and keys; then what each stored (orders,
 * pets, and each change's order event and pet.updated in one transaction), and concurrent buyers
 * of one pet and tills completing one order. An order's times are the instant it was placed or
 * closed on each server, so answers and rows compare with the instants of the test's own run
 * masked, and each answer's hold is checked on its own.
 */
describe.each(ENGINES)(
  'bench reference answers createOrder and completeOrder as the service does [%s]',
  (engine) => {
    let pair: ParityPair;
    const startedAt = Date.now();
    /** The instant `ms` before the run started, as the Order's JSON and SQLite hold it. */
    const ago = (ms: number) => new Date(startedAt - ms).toISOString();
    /** Instants of this run become <now>; the seeded ones, an hour back and more, stay. */
    const maskNow = (text: string) =>
      text.replace(ISO_INSTANT, (instant) =>
        Date.parse(instant) >= startedAt ? '<now>' : instant,
      );

    beforeAll(async () => {
      // Pets 15, 20 and 25 held by orders 1 to 3, whose deadlines passed an hour ago; order 4
      // cancelled (pet 10 available). Columns as the service writes them, so both engines take it.
      const [placed, deadline] = [`'${ago(2 * HOUR_MS)}'`, `'${ago(HOUR_MS)}'`];
      const lapsed = (petId: number) => `(${petId}, 'open', ${placed}, ${deadline}, NULL, 1)`;
      const closed = `'${ago(HOUR_MS + 60_000)}'`;
      const cancelled = `(10, 'cancelled', ${placed}, ${deadline}, ${closed}, 2)`;
      pair = await startParityPair(engine, {
        seed: [
          "UPDATE pets SET status = 'pending', revision = 2 WHERE id IN (15, 20, 25)",
          `INSERT INTO orders (pet_id, status, created_at, expires_at, closed_at, revision)
          VALUES ${[lapsed(15), lapsed(20), lapsed(25), cancelled].join(', ')}`,
        ],
      });
    });
    afterAll(() => pair?.stop());

    const ORDERS = '/v1/orders';
    const complete = (id: number | string) => `${ORDERS}/${id}/complete`;
    const withIfMatch = (ifMatch: string): CaseRequest => ({
      headers: { ...auth, 'if-match': ifMatch },
    });
    const rawBody = (body: string | Buffer, headers: Headers = {}): CaseRequest => ({
      headers: { ...asJson, ...headers },
      body,
    });
    const READ_ONLY = { authorization: 'Bearer READ_ONLY_KEY' };
    const notAvailable = (petId: number, what: string) => `Pet ${petId} ${what}`;

    const placing: ParityCase[] = [
      ['order an available pet', 201, 'POST', ORDERS, json({ petId: 5, holdSeconds: 600 })],
      [notAvailable(5, 'is held'), 409, 'POST', ORDERS, json({ petId: 5 })],
      [notAvailable(8, 'is pending, held by no order'), 409, 'POST', ORDERS, json({ petId: 8 })],
      [notAvailable(1, 'is sold'), 409, 'POST', ORDERS, json({ petId: 1 })],
      [notAvailable(2, 'has no status'), 409, 'POST', ORDERS, json({ petId: 2 })],
      ['a pet that does not exist', 400, 'POST', ORDERS, json({ petId: 4242 })],
      ['the largest id, no such pet', 400, 'POST', ORDERS, json({ petId: MAX_ID })],
      ['a pet whose hold lapsed, the default hold', 201, 'POST', ORDERS, json({ petId: 20 })],
      [
        'add pet 26, oddly named',
        201,
        'POST',
        '/v1/pets',
        json({ name: 'Ünï "q" \\ \n\u001f🐶', categoryId: 3, status: 'available' }),
      ],
      ['order it for a day', 201, 'POST', ORDERS, json({ petId: 26, holdSeconds: 86_400 })],
      [
        'add pet 27',
        201,
        'POST',
        '/v1/pets',
        json({ name: 'Rex', categoryId: 1, status: 'available' }),
      ],
    ];

    const badOrders: ParityCase[] = [
      ...(
        [
          ['no petId', '{}'],
          ['petId as a string', '{"petId":"5"}'],
          ['a fractional petId', '{"petId":1.5}'],
          ['petId 0', '{"petId":0}'],
          ['petId past the largest', `{"petId":${MAX_ID + 1}}`],
          ['a null petId', '{"petId":null}'],
          ['holdSeconds 59', '{"petId":5,"holdSeconds":59}'],
          ['holdSeconds 86401', '{"petId":5,"holdSeconds":86401}'],
          ['a null holdSeconds', '{"petId":5,"holdSeconds":null}'],
          ['holdSeconds as a string', '{"petId":5,"holdSeconds":"60"}'],
          ['a fractional holdSeconds', '{"petId":5,"holdSeconds":60.5}'],
          ['both wrong', '{"petId":-1,"holdSeconds":0}'],
          ['an unknown member', '{"petId":5,"id":3}'],
          ['dropped members first', '{"toString":1,"petId":0,"__proto__":1,"q":1}'],
          ['an array', '[5]'],
          ['a string', '"5"'],
          ['null', 'null'],
          ['broken JSON', '{"petId":'],
          ['too deeply nested', `${'['.repeat(40)}${']'.repeat(40)}`],
          ['an empty body', ''],
        ] as const
      ).map(([what, body]): ParityCase => [what, 400, 'POST', ORDERS, raw(body)]),
      ['no body and no content type', 400, 'POST', ORDERS, { headers: auth }],
      ...['text/plain', 'application/merge-patch+json'].map((type): ParityCase => [
        `Content-Type ${type}`,
        415,
        'POST',
        ORDERS,
        rawBody('{"petId":5}', { 'content-type': type }),
      ]),
      [
        'a compressed body',
        415,
        'POST',
        ORDERS,
        rawBody('{"petId":5}', { 'content-encoding': 'gzip' }),
      ],
      ['a body over the limit', 413, 'POST', ORDERS, json({ petId: 5, pad: 'x'.repeat(20_000) })],
      ['no key', 401, 'POST', ORDERS, { headers: { 'content-type': 'application/json' } }],
      [
        'a revoked key',
        401,
        'POST',
        ORDERS,
        { ...json({ petId: 5 }), headers: { ...asJson, authorization: 'Bearer REVOKED_KEY' } },
      ],
      [
        'a tampered key',
        401,
        'POST',
        ORDERS,
        { ...json({ petId: 5 }), headers: { ...asJson, authorization: 'Bearer TAMPERED_KEY' } },
      ],
      [
        'a key without orders:write and a bad body: 403',
        403,
        'POST',
        ORDERS,
        { headers: { ...READ_ONLY, 'content-type': 'application/json' }, body: '{bad' },
      ],
      ['PUT the collection: 405 with Allow', 405, 'PUT', ORDERS, json({ petId: 5 })],
      ['DELETE an order: 405 with Allow', 405, 'DELETE', `${ORDERS}/5`, { headers: auth }],
      ['GET a completion: 405 with Allow', 405, 'GET', complete(5), { headers: auth }],
    ];

    const closing: ParityCase[] = [
      // Completed at once: a hold left open must not lapse before the rows are compared.
      ['order pet 27 for a minute', 201, 'POST', ORDERS, json({ petId: 27, holdSeconds: 60 })],
      ['complete it, a body ignored', 200, 'POST', complete(8), rawBody('{"petId":1}')],
      ['complete an open order', 200, 'POST', complete(5), { headers: auth }],
      ['complete it again', 409, 'POST', complete(5), { headers: auth }],
      ['an order whose hold lapsed answers expired', 409, 'POST', complete(1), { headers: auth }],
      [
        'a lapsed order and the ETag it was open with',
        412,
        'POST',
        complete(3),
        withIfMatch('"3-1"'),
      ],
      ['an expired order and its current ETag', 409, 'POST', complete(3), withIfMatch('"3-2"')],
      ['a cancelled order', 409, 'POST', complete(4), { headers: auth }],
      ['no such order', 404, 'POST', complete(4242), { headers: auth }],
      [
        'no such order and a stale If-Match: 404',
        404,
        'POST',
        complete(4242),
        withIfMatch('"0-0"'),
      ],
      ['a stale If-Match', 412, 'POST', complete(6), withIfMatch('"6-2"')],
      ['a weak If-Match', 412, 'POST', complete(6), withIfMatch('W/"6-1"')],
      ['a malformed If-Match', 400, 'POST', complete(6), withIfMatch('not a tag')],
      ['If-Match listing the current tag', 200, 'POST', complete(6), withIfMatch('"1-1", "6-1"')],
      ['If-Match: * on a completed order', 409, 'POST', complete(6), withIfMatch('*')],
      ['If-Match: *, the oddly named pet', 200, 'POST', complete(7), withIfMatch('*')],
      ['order the pet an expiry released', 201, 'POST', ORDERS, json({ petId: 25 })],
      ['and the other', 201, 'POST', ORDERS, json({ petId: 15, holdSeconds: 3600 })],
      ...['0', '-1', '01', '1.5', 'abc', '9007199254740992', '%20'].map((id): ParityCase => [
        `id ${id}`,
        400,
        'POST',
        complete(id),
        { headers: auth },
      ]),
      ['an empty id', 404, 'POST', complete(''), { headers: auth }],
      [
        'a bad id and a malformed If-Match: the If-Match',
        400,
        'POST',
        complete('01'),
        withIfMatch('bad'),
      ],
      ['no key', 401, 'POST', complete(9), {}],
      [
        'a key without orders:write, a bad id and a malformed If-Match: 403',
        403,
        'POST',
        complete('01'),
        { headers: { ...READ_ONLY, 'if-match': 'x' } },
      ],
      ['PUT a completion: 405 with Allow', 405, 'PUT', complete(9), { headers: auth }],
    ];

    // Run in this order: each case's expected status keeps it meaning what it says.
    const cases: ParityCase[] = [...placing, ...badOrders, ...closing];

    it.each(cases.map((c, i) => [i + 1, ...c] as const))(
      '%i. %s: %i for %s %s',
      async (n, ...parityCase) => {
        const answers = await pair.expectSameAnswer(parityCase, `parity-orders-${n}`, maskNow);
        const [, status, , path, { body }] = parityCase;
        if (path === ORDERS && status === 201) {
          const asked = JSON.parse(body as string) as { holdSeconds?: number };
          for (const held of answers.map(holdMs))
            expect(held).toBe((asked.holdSeconds ?? DEFAULT_HOLD_SECONDS) * 1000);
        }
        if (path.endsWith('/complete') && status === 200)
          for (const { body: sent } of answers)
            expect(Date.parse(JSON.parse(sent).closedAt)).toBeGreaterThanOrEqual(startedAt);
      },
    );

    it('concurrent buyers of one pet and tills completing one order answer as the service', async () => {
      const post = (baseUrl: string, path: string, body?: unknown) =>
        send(baseUrl, {
          method: 'POST',
          path,
          headers: pair.withKeys(body === undefined ? auth : asJson),
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const counts = (statuses: number[]) =>
        statuses.reduce<Record<number, number>>(
          (count, status) => ({ ...count, [status]: (count[status] ?? 0) + 1 }),
          {},
        );
      // Pet 28, then ten orders of it at once, then ten completions of the one placed (order 11).
      const race = async (baseUrl: string) => {
        const pet = { name: 'Fido', categoryId: 2, status: 'available' };
        expect((await post(baseUrl, '/v1/pets', pet)).status).toBe(201);
        const buyers = Array.from({ length: 10 }, () => post(baseUrl, ORDERS, { petId: 28 }));
        const placed = await Promise.all(buyers);
        const tills = Array.from({ length: 10 }, () => post(baseUrl, complete(11)));
        const completed = await Promise.all(tills);
        return [counts(placed.map((r) => r.status)), counts(completed.map((r) => r.status))];
      };

      const fromService = await race(pair.service.baseUrl);
      const fromReference = await race(pair.reference.baseUrl);

      expect(fromService).toEqual([
        { 201: 1, 409: 9 },
        { 200: 1, 409: 9 },
      ]);
      expect(fromReference).toEqual(fromService);
    });

    it('both stored the same orders, pets and events, each change’s two in one transaction', async () => {
      const time = (column: string) =>
        engine === 'postgres'
          ? `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`
          : column;
      const orders = `SELECT id, pet_id, status, ${time('created_at')}, ${time('expires_at')},
        ${time('closed_at')}, revision FROM orders ORDER BY id`;
      const pets = 'SELECT id, status, revision FROM pets ORDER BY id';
      const events = 'SELECT type, pet_id, pet, previous, tx FROM pet_events ORDER BY tx, seq';
      const stored = async (url: string) => {
        const [orderRows, petRows, eventRows] = await Promise.all(
          [orders, pets, events].map((sql) => readRows(url, sql)),
        );
        expectPairsInOneTransaction(eventRows);
        // A pet's events in their order: the sweep may expire a lapsed hold in the service
        // before a write meets it, which moves the pair among other pets' events, not its own.
        const byPet = [...eventRows].sort((a, b) => Number(a.pet_id) - Number(b.pet_id));
        return {
          orders: orderRows.map((row) => mapValues(row, maskNow)),
          pets: petRows,
          events: byPet.map(({ tx: _tx, ...event }) => mapValues(event, maskNow)),
        };
      };
      const [fromService, fromReference] = await Promise.all(
        [pair.databaseUrls.service, pair.databaseUrls.reference].map(stored),
      );
      expect(fromReference).toEqual(fromService);

      const { orders: rows, pets: petRows, events: written } = fromService;
      expect(rows.map((row) => `${row.id} ${row.pet_id} ${row.status} ${row.revision}`)).toEqual([
        '1 15 expired 2',
        '2 20 expired 2',
        '3 25 expired 2',
        '4 10 cancelled 2',
        '5 5 completed 2',
        '6 20 completed 2',
        '7 26 completed 2',
        '8 27 completed 2',
        '9 25 open 1',
        '10 15 open 1',
        '11 28 completed 2',
      ]);
      // An expired order closed at its deadline.
      expect(rows[0]).toMatchObject({ expires_at: ago(HOUR_MS), closed_at: ago(HOUR_MS) });
      const pet = (id: number) => petRows.find((row) => row.id === String(id));
      expect([5, 10, 15, 20, 25, 26].map(pet)).toEqual([
        { id: '5', status: 'sold', revision: '3' },
        { id: '10', status: 'available', revision: '1' },
        { id: '15', status: 'pending', revision: '4' },
        { id: '20', status: 'sold', revision: '5' },
        { id: '25', status: 'pending', revision: '4' },
        { id: '26', status: 'sold', revision: '3' },
      ]);
      expect(written.filter((event) => event.pet_id === '20')).toEqual([
        {
          type: 'order.expired',
          pet_id: '20',
          pet: `{"id":2,"petId":20,"status":"expired","createdAt":"${ago(2 * HOUR_MS)}","expiresAt":"${ago(HOUR_MS)}","closedAt":"${ago(HOUR_MS)}"}`,
          previous: null,
        },
        {
          type: 'pet.updated',
          pet_id: '20',
          pet: '{"id":20,"name":"pet 20","categoryId":1,"status":"available"}',
          previous: '{"status":"pending"}',
        },
        {
          type: 'order.created',
          pet_id: '20',
          pet: '{"id":6,"petId":20,"status":"open","createdAt":"<now>","expiresAt":"<now>"}',
          previous: null,
        },
        {
          type: 'pet.updated',
          pet_id: '20',
          pet: '{"id":20,"name":"pet 20","categoryId":1,"status":"pending"}',
          previous: '{"status":"available"}',
        },
        {
          type: 'order.completed',
          pet_id: '20',
          pet: '{"id":6,"petId":20,"status":"completed","createdAt":"<now>","expiresAt":"<now>","closedAt":"<now>"}',
          previous: null,
        },
        {
          type: 'pet.updated',
          pet_id: '20',
          pet: '{"id":20,"name":"pet 20","categoryId":1,"status":"sold"}',
          previous: '{"status":"pending"}',
        },
      ]);
      expect(
        written.find((event) => event.pet_id === '26' && event.type === 'pet.updated'),
      ).toEqual({
        type: 'pet.updated',
        pet_id: '26',
        pet: '{"id":26,"name":"Ünï \\"q\\" \\\\ \\n\\u001f🐶","categoryId":3,"status":"pending"}',
        previous: '{"status":"available"}',
      });
    });
  },
);

/** How long an Order answer holds its pet: expiresAt − createdAt, in ms. */
function holdMs({ body }: Received): number {
  const { createdAt, expiresAt } = JSON.parse(body) as { createdAt: string; expiresAt: string };
  return Date.parse(expiresAt) - Date.parse(createdAt);
}

/** Every order event is followed by its pet's pet.updated, written in the same transaction. */
function expectPairsInOneTransaction(events: Record<string, string | null>[]): void {
  events.forEach((event, i) => {
    if (!event.type!.startsWith('order.')) return;
    expect(events[i + 1]).toMatchObject({
      type: 'pet.updated',
      pet_id: event.pet_id,
      tx: event.tx,
    });
  });
}

function mapValues(
  row: Record<string, string | null>,
  map: (value: string) => string,
): Record<string, string | null> {
  return Object.fromEntries(
    Object.entries(row).map(([column, value]) => [column, value === null ? null : map(value)]),
  );
}
