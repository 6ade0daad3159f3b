import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileApp, type HostileApp } from '../../support/hostile-app.js';
import { assertProperty, expectRequestsSent, requestFloor } from '../../support/hostile-run.js';
import { decodedPath } from '../../support/hostile-urls.js';
import { OpenApiDocument } from '../../support/openapi-arbitraries.js';
import { ENGINES } from '../../support/test-database.js';

/**
 * Any method on any path with any headers, through the real app: documented methods are served as
 * documented, other methods on a documented path are a 405 naming the allowed ones, unknown paths
 * a 404; a sane X-Request-Id is echoed, and no pet is added but by a 201 or removed but by
 * deletePet's 204. Seed and run scale: see
 * test/support/hostile-run.ts.
 */
const doc = OpenApiDocument.load();
const operations = ['listPets', 'createPet', 'getPet'].map((id) => doc.operation(id));

describe.each(ENGINES)('hostile methods, paths and headers through the real app [%s]', (engine) => {
  let app: HostileApp;

  beforeAll(async () => {
    app = await startHostileApp(engine, doc);
    // Pets 1 to 250 exist, so GET on a generated pet path (ids 1 to 201) can find one.
    await app.seedPets(250);
  });
  afterAll(() => app?.close());

  it('any method on any path with any headers: documented methods are served, others are 404 or 405 with Allow', async () => {
    // The event stream stays open by design, which an injected request cannot end; its hostile
    // input goes over real sockets in hostile-input/events.e2e-spec.ts.
    const routes = doc.routes().filter(({ path }) => !path.endsWith('/events/stream'));
    const request = fc.record({
      method: fc.constantFrom(
        'GET',
        'HEAD',
        'POST',
        'PUT',
        'PATCH',
        'DELETE',
        'OPTIONS',
        'TRACE',
        'SEARCH',
      ),
      path: fc.oneof(
        fc
          .constantFrom(...routes.map(({ path }) => path))
          .chain((path) => fc.nat(200).map((id) => path.replace(/\{[^}]+\}/g, String(id + 1)))),
        fc.webPath().map((path) => (path.startsWith('/') ? path : `/${path}`)),
        fc.constantFrom(
          '/',
          '/v1',
          '/v1/',
          '/v2/pets',
          '/V1/PETS',
          '/v1/pets/',
          '/health/live',
          '/docs-json',
        ),
      ),
      headers: fc.dictionary(
        fc.constantFrom(
          'accept',
          'accept-encoding',
          'accept-language',
          'cookie',
          'origin',
          'range',
          'if-none-match',
          'x-forwarded-for',
          'x-forwarded-host',
          'x-forwarded-proto',
          'x-http-method-override',
          'x-request-id',
          'idempotency-key',
          'prefer',
          'content-type',
          'content-encoding',
        ),
        fc.string({ unit: 'grapheme-ascii', maxLength: 140 }),
        { maxKeys: 4 },
      ),
      withKey: fc.boolean(),
    });
    await assertProperty('any route', engine, 1000, request, async (r) => {
      const route = routes.find(({ path }) =>
        new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(decodedPath(r.path)),
      );
      const served = route?.methods.includes(r.method === 'HEAD' ? 'GET' : r.method);
      const operation = served
        ? operations.find(
            (op) =>
              op.path === route!.path && op.method === (r.method === 'HEAD' ? 'GET' : r.method),
          )
        : undefined;
      const countBefore = await app.petCount();
      const answer = await app.send(
        r.method,
        r.path,
        { headers: { ...r.headers, ...(r.withKey && { authorization: app.bearer() }) } },
        { operation: r.method === 'HEAD' ? undefined : operation },
      );
      if (route && !served) {
        expect(answer.status).toBe(405);
        for (const method of route.methods)
          expect(String(answer.headers.allow).split(', ')).toContain(method);
      }
      if (!route && !r.path.startsWith('/docs') && !r.path.startsWith('/health'))
        expect(answer.status).toBe(404);
      const xRequestId = r.headers['x-request-id'];
      if (xRequestId !== undefined && /^[\w.:-]{1,128}$/.test(xRequestId))
        expect(answer.headers['x-request-id']).toBe(xRequestId);
      const removed =
        answer.status === 204 && r.method === 'DELETE' && route?.path === '/v1/pets/{petId}';
      expect(await app.petCount()).toBe(
        countBefore + (answer.status === 201 ? 1 : 0) - (removed ? 1 : 0),
      );
    });
  });
});

describe('the hostile run on any route as a whole', () => {
  const floor = requestFloor(1000);
  it(`sent at least ${floor} generated requests`, () => expectRequestsSent(floor));
});
