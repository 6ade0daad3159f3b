import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { EVENT_TYPES } from '../../../src/events/pet-event.js';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { OpenApiDocument } from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Hostile input to createWebhook and the webhook id: any body is a 201 for exactly the valid ones
 * and a 400 naming the field otherwise, never a 5xx; a created webhook shows its secret once.
 * Seed and run scale: see test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const createWebhook = doc.operation('createWebhook');
const getWebhook = doc.operation('getWebhook');
const TYPES: string[] = [...EVENT_TYPES];

/** URLs of every kind: web URLs with and without the parts refused, and anything at all. */
const urls = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.webUrl().map((url) => url.replace('://', '://user:pw@')),
  fc.webUrl().map((url) => url.replace(/^https?/, 'ftp')),
  fc.webUrl().map((url) => `${url}/${'a'.repeat(2100)}`),
  fc.string({ maxLength: 30 }),
  fc.constantFrom('http://', 'https://[::1]/x', 'http://127.0.0.1:9/', 'HTTPS://A.EXAMPLE'),
);

const events = fc.oneof(
  fc.subarray(TYPES),
  fc.array(fc.constantFrom(...TYPES, 'pet.removed', 'order.placed', '', 'PET.CREATED'), {
    maxLength: 4,
  }),
  fc.jsonValue({ maxDepth: 1 }),
);

/** An http(s) URL with a host and no credentials or fragment, of at most 2048 characters. */
function isAcceptedUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value) || value.includes('#')) return false;
  const url = new URL(value);
  return (
    ['http:', 'https:'].includes(url.protocol) &&
    url.host !== '' &&
    !url.username &&
    !url.password &&
    url.href.length <= 2048
  );
}

function isAcceptedFilter(value: unknown): boolean {
  if (value === undefined) return true;
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    new Set(value).size === value.length &&
    value.every((type) => TYPES.includes(type as string))
  );
}

describe.each(ENGINES)('hostile input to the webhooks [%s]', (engine) => {
  let app: HostileApp;
  let authorization: string;

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    const { key } = await app.t.app
      .get(ApiKeyStore)
      .create('hooks', { scopes: ['webhooks:manage'] });
    authorization = `Bearer ${key}`;
  });
  afterAll(() => app?.close());

  it('createWebhook: a valid body is 201 with a secret, anything else 400 naming the field', async () => {
    const body = fc.record(
      { url: fc.oneof(urls, fc.jsonValue({ maxDepth: 1 })), events },
      { requiredKeys: [] },
    );
    await assertProperty('createWebhook', engine, 300, body, async (request) => {
      const answer = await app.send(
        'POST',
        createWebhook.path,
        {
          headers: { authorization, 'content-type': 'application/json' },
          payload: JSON.stringify(request),
        },
        { operation: createWebhook, echoable: Object.keys(request) },
      );
      const valid = isAcceptedUrl(request.url) && isAcceptedFilter(request.events);
      expect(answer.status, answer.body).toBe(valid ? 201 : 400);
      const answered = JSON.parse(answer.body) as Record<string, unknown>;
      if (!valid) {
        const field = isAcceptedUrl(request.url) ? 'events' : 'url';
        expect(answered).toMatchObject({ code: 'VALIDATION_FAILED' });
        expect(answered.message).toMatch(new RegExp(`^${field} `));
        return;
      }
      expect(answered.url).toBe(new URL(request.url as string).href);
      expect(answered.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      // Deleted again, so the table stays small; a 204 has no body for the success checks.
      const deleted = await app.send('DELETE', `/v1/webhooks/${String(answered.id)}`, {
        headers: { authorization },
      });
      expect(deleted.status).toBe(204);
    });
  });

  it('getWebhook: any id segment is a 404 or a 400 naming it, never a 5xx', async () => {
    const ids = fc.oneof(
      fc.bigInt({ min: -5n, max: 2n ** 64n }).map(String),
      fc.string({ unit: 'grapheme-ascii', maxLength: 12 }).map(encodeURIComponent),
    );
    await assertProperty('getWebhook', engine, 200, ids, async (id) => {
      const answer = await app.send(
        'GET',
        `/v1/webhooks/${id}`,
        { headers: { authorization } },
        { operation: getWebhook },
      );
      expect([400, 404]).toContain(answer.status);
    });
  });
});

describe('the hostile webhooks run as a whole', () => {
  const floor = requestFloor(300 + 200);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
