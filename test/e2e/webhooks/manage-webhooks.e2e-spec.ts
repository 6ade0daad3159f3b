import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const URL_MESSAGE =
  'url must be an absolute http or https URL of at most 2048 characters, without credentials or fragment';
const EVENTS_MESSAGE =
  'events must be a non-empty array of distinct event types, each one of "pet.created", "pet.updated", "pet.deleted", "category.updated", "category.deleted", "order.created", "order.completed", "order.cancelled", "order.expired" (or absent for all)';

const invalid = (message: string) => ({ code: 'VALIDATION_FAILED', message, status: 400 });

/** The state of a webhook that has been sent nothing yet. */
const UNTOUCHED = {
  disabled: false,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastFailureReason: null,
  pendingDeliveries: 0,
  givenUpDeliveries: 0,
};

describe.each(ENGINES)('webhook subscriptions [%s]', (engine) => {
  let t: TestApp;
  let manager: string;

  beforeAll(async () => {
    t = await startTestApp(engine, {
      RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM webhook_deliveries');
    await t.dataSource.query('DELETE FROM webhook_subscriptions');
  });

  const as = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
    t.request(method, url, { key: manager, ...(body !== undefined && { body }) });

  it('creates a webhook and shows its secret once: 201 with id, url, events, createdAt, secret', async () => {
    const before = Date.now();
    const created = await as('POST', '/v1/webhooks', {
      url: 'https://marketplace.example/hooks',
      events: ['pet.updated'],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = created.json();
    expect(Object.keys(body)).toEqual(['id', 'url', 'events', 'createdAt', 'secret']);
    expect(body).toEqual({
      id: expect.any(Number),
      url: 'https://marketplace.example/hooks',
      events: ['pet.updated'],
      createdAt: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(Date.parse(body.createdAt)).toBeGreaterThanOrEqual(before - 1);

    const got = await as('GET', `/v1/webhooks/${body.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({
      id: body.id,
      url: 'https://marketplace.example/hooks',
      events: ['pet.updated'],
      createdAt: body.createdAt,
      ...UNTOUCHED,
    });
    expect(got.body).not.toContain(body.secret);
    expect(got.body).not.toContain('whsec_');
  });

  it('without events subscribes to every type (events: null); lists oldest first, never a secret', async () => {
    const first = (await as('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/a' })).json();
    const second = (
      await as('POST', '/v1/webhooks', {
        url: 'https://b.example/x?y=1',
        events: ['pet.updated', 'pet.created'],
      })
    ).json();
    expect(first.events).toBeNull();
    // Stored in the order of the event types, whatever order they were named in.
    expect(second.events).toEqual(['pet.created', 'pet.updated']);
    expect(second.id).toBeGreaterThan(first.id);

    const listed = await as('GET', '/v1/webhooks');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([
      {
        id: first.id,
        url: 'http://127.0.0.1:9/a',
        events: null,
        createdAt: first.createdAt,
        ...UNTOUCHED,
      },
      {
        id: second.id,
        url: 'https://b.example/x?y=1',
        events: ['pet.created', 'pet.updated'],
        createdAt: second.createdAt,
        ...UNTOUCHED,
      },
    ]);
    expect(listed.body).not.toContain('whsec_');
  });

  it('filters by the catalogue event types too, stored in the order of the event types', async () => {
    const created = await as('POST', '/v1/webhooks', {
      url: 'https://shop.example/hook',
      events: ['category.deleted', 'pet.deleted', 'category.updated'],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().events).toEqual(['pet.deleted', 'category.updated', 'category.deleted']);
  });

  it('filters by the order event types too, stored in the order of the event types', async () => {
    const created = await as('POST', '/v1/webhooks', {
      url: 'https://till.example/hook',
      events: ['order.expired', 'pet.updated', 'order.created'],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().events).toEqual(['pet.updated', 'order.created', 'order.expired']);
  });

  it('stores the URL as the WHATWG URL parser normalizes it', async () => {
    const created = await as('POST', '/v1/webhooks', { url: 'HTTPS://Shop.Example:443/a/../hook' });
    expect(created.json().url).toBe('https://shop.example/hook');
  });

  it('rotates the secret: 200 with a new secret, never shown again', async () => {
    const created = (await as('POST', '/v1/webhooks', { url: 'https://a.example/' })).json();
    const rotated = await as('POST', `/v1/webhooks/${created.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toEqual({ ...created, secret: expect.stringMatching(SECRET) });
    expect(rotated.json().secret).not.toBe(created.secret);
    const [row] = await t.dataSource.query(
      `SELECT secret, previous_secret, previous_secret_expires_at
      FROM webhook_subscriptions WHERE id = ${Number(created.id)}`,
    );
    expect(row.secret).toBe(rotated.json().secret);
    expect(row.previous_secret).toBe(created.secret);
    const overlapEnds = new Date(row.previous_secret_expires_at).getTime();
    expect(Math.abs(overlapEnds - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);
    expect((await as('GET', `/v1/webhooks/${created.id}`)).body).not.toContain('whsec_');
  });

  it('deletes: 204 with no body, then 404 for it everywhere', async () => {
    const { id } = (await as('POST', '/v1/webhooks', { url: 'https://a.example/' })).json();
    const deleted = await as('DELETE', `/v1/webhooks/${id}`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    const gone = { code: 'NOT_FOUND', message: `No webhook with id ${id}`, status: 404 };
    for (const [method, url] of [
      ['GET', `/v1/webhooks/${id}`],
      ['DELETE', `/v1/webhooks/${id}`],
      ['POST', `/v1/webhooks/${id}/rotate-secret`],
    ] as const) {
      const response = await as(method, url);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(gone);
    }
    expect((await as('GET', '/v1/webhooks')).json()).toEqual([]);
  });

  it('refuses a webhook past the 100th with 409 WEBHOOK_LIMIT_REACHED, creating nothing; a deletion makes room', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 100; i++) {
      const created = await as('POST', '/v1/webhooks', { url: `https://a.example/${i}` });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json().id);
    }
    const refused = await as('POST', '/v1/webhooks', { url: 'https://a.example/101' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      code: 'WEBHOOK_LIMIT_REACHED',
      message: 'The store has 100 webhooks, the most it may have: delete one first',
      status: 409,
    });
    expect((await as('GET', '/v1/webhooks')).json()).toHaveLength(100);

    expect((await as('DELETE', `/v1/webhooks/${ids[0]}`)).statusCode).toBe(204);
    expect((await as('POST', '/v1/webhooks', { url: 'https://a.example/101' })).statusCode).toBe(
      201,
    );
  });

  it('gives the last places to exactly as many of concurrent creates as there are', async () => {
    for (let i = 0; i < 95; i++)
      expect((await as('POST', '/v1/webhooks', { url: `https://a.example/${i}` })).statusCode).toBe(
        201,
      );
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const response = await as('POST', '/v1/webhooks', { url: `https://b.example/${i}` });
        return response.statusCode;
      }),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status === 409)).toHaveLength(5);
    expect((await as('GET', '/v1/webhooks')).json()).toHaveLength(100);
  });

  it.each([
    [{}, 'url is required'],
    [{ url: 'ftp://a.example/' }, URL_MESSAGE],
    [{ url: 'file:///etc/passwd' }, URL_MESSAGE],
    [{ url: '/relative' }, URL_MESSAGE],
    [{ url: 'https://user:pw@a.example/' }, URL_MESSAGE],
    [{ url: 'https://a.example/#frag' }, URL_MESSAGE],
    [{ url: 'https://a.example/#' }, URL_MESSAGE],
    [{ url: `https://a.example/${'a'.repeat(2048)}` }, URL_MESSAGE],
    [{ url: 42 }, URL_MESSAGE],
    [{ url: 'https://a.example/', events: [] }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: null }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: 'pet.created' }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: ['pet.created', 'pet.created'] }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: ['pet.removed'] }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: ['order.placed'] }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', events: [1] }, EVENTS_MESSAGE],
    [{ url: 'https://a.example/', secret: 'whsec_mine' }, 'secret is not a known field'],
  ])('refuses %j with 400 VALIDATION_FAILED, creating nothing', async (body, message) => {
    const refused = await as('POST', '/v1/webhooks', body);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(invalid(message));
    expect((await as('GET', '/v1/webhooks')).json()).toEqual([]);
  });

  it.each(['0', '-1', '1.0', '01', 'abc', '9007199254740992'])(
    'refuses the id %j with 400 naming it',
    async (id) => {
      const response = await as('GET', `/v1/webhooks/${id}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(
        invalid('id must be a decimal integer from 1 to 9007199254740991'),
      );
    },
  );

  it('needs webhooks:manage: a default key (pets:read, pets:write) gets 403 on every operation', async () => {
    const forbidden = {
      code: 'FORBIDDEN',
      message: 'This API key lacks the scope webhooks:manage',
      status: 403,
    };
    for (const [method, url] of [
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/webhooks'],
      ['GET', '/v1/webhooks/1'],
      ['DELETE', '/v1/webhooks/1'],
      ['POST', '/v1/webhooks/1/rotate-secret'],
    ] as const) {
      const response = await t.request(method, url, { body: { url: 'https://a.example/' } });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(forbidden);
    }
    expect((await as('GET', '/v1/webhooks')).json()).toEqual([]);
  });

  it('refuses a request without a key with 401 before looking at the body', async () => {
    const response = await t.request('POST', '/v1/webhooks', { key: null, body: {} });
    expect(response.statusCode).toBe(401);
  });
});

describe.each(ENGINES)('webhook targets as production checks them [%s]', (engine) => {
  let t: TestApp;
  let manager: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
  });
  afterAll(() => t?.close());

  it.each([
    ['http://shop.example/hook', 'url must be an https URL'],
    [
      'https://127.0.0.1/hook',
      'url must not point to a loopback, private or otherwise non-public address',
    ],
    [
      'https://2130706433/hook',
      'url must not point to a loopback, private or otherwise non-public address',
    ],
    [
      'https://[::ffff:169.254.169.254]/',
      'url must not point to a loopback, private or otherwise non-public address',
    ],
    [
      'https://10.0.0.8/hook',
      'url must not point to a loopback, private or otherwise non-public address',
    ],
    [
      'https://localhost/hook',
      'url must not name a local host (localhost, *.localhost, *.internal, *.local)',
    ],
    [
      'https://metadata.google.internal/',
      'url must not name a local host (localhost, *.localhost, *.internal, *.local)',
    ],
  ])('refuses %s before storing anything: 400', async (url, message) => {
    const response = await t.request('POST', '/v1/webhooks', { key: manager, body: { url } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(invalid(message));
    expect(await t.dataSource.query('SELECT id FROM webhook_subscriptions')).toEqual([]);
  });

  it('accepts https to a public name: its addresses are checked on every connection', async () => {
    const response = await t.request('POST', '/v1/webhooks', {
      key: manager,
      body: { url: 'https://marketplace.example/hooks' },
    });
    expect(response.statusCode).toBe(201);
  });
});
