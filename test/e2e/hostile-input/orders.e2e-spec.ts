import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNamesFields } from '../../support/answer-checks.js';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { OpenApiDocument } from '../../support/openapi-arbitraries.js';
import { MAX_ID } from '../../support/pets-api.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to the orders: any createOrder body is a 201 for exactly the valid ones naming an
 * available pet, a 400 naming every offending field otherwise, never a 5xx, never an order stored
 * for a refusal; any order id segment and listOrders query is answered as documented. Seed and run
 * scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const createOrder = doc.operation('createOrder');
const listOrders = doc.operation('listOrders');
const ORDER_PATHS = [
  ['GET', '', doc.operation('getOrder')],
  ['POST', '/complete', doc.operation('completeOrder')],
  ['POST', '/cancel', doc.operation('cancelOrder')],
] as const;

const PETS = 5;

const isId = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID;
const isHold = (value: unknown) =>
  value === undefined ||
  (typeof value === 'number' && Number.isInteger(value) && value >= 60 && value <= 86_400);

describe.each(ENGINES)('hostile input to the orders [%s]', (engine) => {
  let app: HostileApp;
  let petIds: number[];

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    await app.seedPets(PETS);
    await app.t.dataSource.query(`UPDATE pets SET status = 'available'`);
    petIds = await Promise.all(Array.from({ length: PETS }, (_, i) => app.existingId(i)));
  });
  afterAll(() => app?.close());

  const orderCount = async () =>
    Number((await app.t.dataSource.query('SELECT count(*) AS n FROM orders'))[0].n);

  it('createOrder: 201 for a valid body naming an available pet, else 400 naming each bad field', async () => {
    const petId = fc.oneof(
      fc.integer({ min: 0, max: PETS - 1 }).map((i) => petIds[i]),
      fc.integer({ min: -2, max: 2 ** 31 }),
      fc.double(),
      fc.jsonValue({ maxDepth: 1 }),
    );
    const holdSeconds = fc.oneof(
      fc.integer({ min: 0, max: 100_000 }),
      fc.double({ min: 59, max: 86_401 }),
      fc.jsonValue({ maxDepth: 1 }),
    );
    const extra = fc.option(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
      {
        nil: undefined,
      },
    );
    const body = fc
      .tuple(fc.record({ petId, holdSeconds }, { requiredKeys: [] }), extra)
      .map(([known, more]) => ({ ...more, ...known }));

    await assertProperty('createOrder', engine, 300, body, async (request) => {
      const before = await orderCount();
      const answer = await app.send(
        'POST',
        createOrder.path,
        {
          headers: { authorization: app.bearer(), 'content-type': 'application/json' },
          payload: JSON.stringify(request),
        },
        { operation: createOrder, echoable: Object.keys(request) },
      );
      const unknown = Object.keys(request).filter((key) => !['petId', 'holdSeconds'].includes(key));
      const offending = [
        ...unknown,
        ...(isId(request.petId) ? [] : ['petId']),
        ...(isHold(request.holdSeconds) ? [] : ['holdSeconds']),
      ];
      const answered = JSON.parse(answer.body) as Record<string, unknown>;
      if (offending.length > 0) {
        expect(answer.status, answer.body).toBe(400);
        expect(answered.code).toBe('VALIDATION_FAILED');
        expectNamesFields(answered.message as string, offending);
        expect(await orderCount()).toBe(before);
        return;
      }
      if (!petIds.includes(request.petId as number)) {
        expect(answer.status, answer.body).toBe(400);
        expect(answered.message).toBe(`petId ${request.petId as number} names no pet`);
        expect(await orderCount()).toBe(before);
        return;
      }
      expect(answer.status, answer.body).toBe(201);
      expect(answered).toMatchObject({ petId: request.petId, status: 'open' });
      // Cancelled again, so every pet stays available for the next run.
      const cancelled = await app.send('POST', `/v1/orders/${String(answered.id)}/cancel`, {
        headers: { authorization: app.bearer() },
      });
      expect(cancelled.status, cancelled.body).toBe(200);
    });
  });

  it('getOrder, completeOrder, cancelOrder: any id segment is a 400 naming orderId, a 404 or a 409', async () => {
    const ids = fc.tuple(
      fc.constantFrom(...ORDER_PATHS),
      fc.oneof(
        fc.bigInt({ min: -5n, max: 2n ** 64n }).map(String),
        // `.` and `..` are no segment a request carries: clients resolve them away (RFC 3986
        // §5.2.4), so `/v1/orders/./cancel` is sent as POST /v1/orders/cancel, a 405.
        fc
          .string({ unit: 'grapheme-ascii', maxLength: 12 })
          .map(encodeURIComponent)
          .filter((segment) => segment !== '.' && segment !== '..'),
        fc.constant('1'),
      ),
    );
    await assertProperty(
      'order ids',
      engine,
      300,
      ids,
      async ([[method, suffix, operation], id]) => {
        const answer = await app.send(
          method,
          `/v1/orders/${id}${suffix}`,
          { headers: { authorization: app.bearer() } },
          { operation },
        );
        expect([200, 400, 404, 409]).toContain(answer.status);
        if (answer.status === 400)
          expect(JSON.parse(answer.body).message).toMatch(/^orderId must be a decimal integer/);
      },
    );
  });

  it('listOrders: any query is a 200 array or a 400 naming the parameter', async () => {
    const value = fc.oneof(
      fc.constantFrom('open', 'completed', 'expired', '1', '20', '0', '101', 'YWZ0ZXI6MQ'),
      fc.string({ unit: 'grapheme-ascii', maxLength: 10 }),
    );
    const query = fc.dictionary(
      fc.constantFrom('status', 'petId', 'limit', 'cursor', 'other'),
      value,
      { maxKeys: 3 },
    );
    await assertProperty('listOrders', engine, 200, query, async (parameters) => {
      const search = new URLSearchParams(parameters).toString();
      const answer = await app.send(
        'GET',
        `${listOrders.path}?${search}`,
        { headers: { authorization: app.bearer() } },
        { operation: listOrders, echoable: Object.keys(parameters) },
      );
      expect([200, 400]).toContain(answer.status);
      if (answer.status === 200) expect(Array.isArray(JSON.parse(answer.body))).toBe(true);
    });
  });
});

describe('the hostile orders run as a whole', () => {
  const floor = requestFloor(300 + 300 + 200);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
