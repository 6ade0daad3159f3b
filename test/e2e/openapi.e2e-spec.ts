import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE, renderOpenApiDocument } from '../../src/write-openapi.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

type Json = Record<string, any>;

const RATE_LIMIT_HEADER_NAMES = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

describe('OpenAPI document', () => {
  let rendered: string;
  let doc: Json;

  beforeAll(async () => {
    rendered = await renderOpenApiDocument();
    doc = JSON.parse(rendered);
  });

  it('is the committed openapi.json (run `npm run openapi` after changing the interface)', () => {
    expect(rendered).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });

  it('has version 1.0.0, a proprietary license and the production and staging servers, both ending in /v1', () => {
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.license).toEqual({
      name: 'Proprietary',
      url: 'https://api.animal-store.example/license',
    });
    expect(doc.servers).toEqual([
      { url: 'https://api.animal-store.example/v1', description: 'Production' },
      { url: 'https://staging.api.animal-store.example/v1', description: 'Staging' },
    ]);
  });

  it('has the three operations of the seed, updatePet, the catalogue, the orders, the events and the webhooks, each requiring bearerAuth with its scope in x-required-scopes and its description', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]): Json => ({ path, method, ...(op as Json) })),
    );
    expect(
      operations.map(
        ({ method, path, operationId }) => `${operationId} ${method.toUpperCase()} ${path}`,
      ),
    ).toEqual([
      'listPets GET /pets',
      'createPet POST /pets',
      'getPet GET /pets/{petId}',
      'updatePet PATCH /pets/{petId}',
      'deletePet DELETE /pets/{petId}',
      'listCategories GET /categories',
      'getCategory GET /categories/{categoryId}',
      'putCategory PUT /categories/{categoryId}',
      'deleteCategory DELETE /categories/{categoryId}',
      'getInventory GET /inventory',
      'listOrders GET /orders',
      'createOrder POST /orders',
      'getOrder GET /orders/{orderId}',
      'completeOrder POST /orders/{orderId}/complete',
      'cancelOrder POST /orders/{orderId}/cancel',
      'listEvents GET /events',
      'streamEvents GET /events/stream',
      'createWebhook POST /webhooks',
      'listWebhooks GET /webhooks',
      'getWebhook GET /webhooks/{id}',
      'deleteWebhook DELETE /webhooks/{id}',
      'rotateWebhookSecret POST /webhooks/{id}/rotate-secret',
    ]);
    const scopes: Json = {
      listPets: 'pets:read',
      createPet: 'pets:write',
      getPet: 'pets:read',
      updatePet: 'pets:write',
      deletePet: 'pets:write',
      listCategories: 'pets:read',
      getCategory: 'pets:read',
      putCategory: 'pets:write',
      deleteCategory: 'pets:write',
      getInventory: 'pets:read',
      listOrders: 'pets:read',
      createOrder: 'orders:write',
      getOrder: 'pets:read',
      completeOrder: 'orders:write',
      cancelOrder: 'orders:write',
      listEvents: 'pets:read',
      streamEvents: 'pets:read',
      createWebhook: 'webhooks:manage',
      listWebhooks: 'webhooks:manage',
      getWebhook: 'webhooks:manage',
      deleteWebhook: 'webhooks:manage',
      rotateWebhookSecret: 'webhooks:manage',
    };
    for (const op of operations) {
      expect(op.tags).toEqual([
        /^\/(categories|orders|events|webhooks)/.exec(op.path)?.[1] ?? 'animals',
      ]);
      // OpenAPI 3.0 lists scopes in a requirement only for OAuth2 and OpenID Connect schemes.
      expect(op.security).toEqual([{ bearerAuth: [] }]);
      expect(op['x-required-scopes']).toEqual([scopes[op.operationId]]);
      expect(op.description).toMatch(
        new RegExp(`\\n\\nNeeds an API key with the scope \`${scopes[op.operationId]}\`\\.$`),
      );
    }
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
  });

  it('documents every status of the seed plus the ones the decisions add', () => {
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path][method].responses);
    expect(statuses('/pets', 'get')).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '429',
      '500',
      '503',
    ]);
    expect(statuses('/pets', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(statuses('/pets/{petId}', 'get')).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '404',
      '410',
      '429',
      '500',
      '503',
    ]);
    expect(statuses('/pets/{petId}', 'patch')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '412',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    const common = ['401', '403', '429', '500', '503'];
    expect(statuses('/webhooks', 'post')).toEqual([
      '201',
      '400',
      ...common.slice(0, 2),
      '409',
      '413',
      '415',
      ...common.slice(2),
    ]);
    expect(statuses('/webhooks', 'get')).toEqual(['200', ...common]);
    for (const [path, method, success] of [
      ['/webhooks/{id}', 'get', '200'],
      ['/webhooks/{id}', 'delete', '204'],
      ['/webhooks/{id}/rotate-secret', 'post', '200'],
    ]) {
      expect(statuses(path, method)).toEqual([
        success,
        '400',
        ...common.slice(0, 2),
        '404',
        ...common.slice(2),
      ]);
    }
    for (const item of Object.values<Json>(doc.paths)) {
      for (const op of Object.values<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (Number(status) >= 400)
            expect(response.content['application/json'].schema).toEqual({
              $ref: '#/components/schemas/Error',
            });
        }
      }
    }
  });

  it('describes listPets: limit 1..100 default 20, status filter, Pets body, Link header', () => {
    const op = doc.paths['/pets'].get;
    const limit = op.parameters.find((p: Json) => p.name === 'limit');
    expect(limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
    expect(op.parameters.find((p: Json) => p.name === 'status')).toMatchObject({
      in: 'query',
      required: false,
      schema: { $ref: '#/components/schemas/PetStatus' },
    });
    expect(op.responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Pet' },
    });
    expect(op.responses['200'].headers.Link).toBeDefined();
  });

  it('describes createPet with a required NewPet body and a Pet response', () => {
    const op = doc.paths['/pets'].post;
    expect(op.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
    });
    expect(op.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Pet',
    });
  });

  it('describes updatePet: a PetPatch merge patch or JSON body, If-Match, the transition table, a Pet with its ETag', () => {
    const op = doc.paths['/pets/{petId}'].patch;
    expect(op.deprecated).toBeUndefined();
    const body = { schema: { $ref: '#/components/schemas/PetPatch' } };
    expect(op.requestBody).toEqual({
      required: true,
      content: { 'application/merge-patch+json': body, 'application/json': body },
    });
    expect(op.parameters).toEqual([
      expect.objectContaining({ name: 'petId', in: 'path', required: true }),
      expect.objectContaining({ name: 'If-Match', in: 'header', required: false }),
    ]);
    expect(op.description).toContain(
      [
        '| from \\ to | available | pending | sold |',
        '|---|---|---|---|',
        '| (none) | yes | yes | yes |',
        '| available | – | yes | yes |',
        '| pending | yes | – | yes |',
        '| sold | – | – | – |',
      ].join('\n'),
    );
    expect(op.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Pet',
    });
    expect(Object.keys(op.responses['200'].headers)).toEqual(['ETag', ...RATE_LIMIT_HEADER_NAMES]);
    expect(op.responses['409'].content['application/json'].examples).toEqual({
      INVALID_TRANSITION: expect.objectContaining({
        value: {
          code: 'INVALID_TRANSITION',
          message:
            'Pet 42 is available: its status can change to pending or sold, not to available',
          status: 409,
        },
      }),
      PET_HELD: expect.objectContaining({
        value: {
          code: 'PET_HELD',
          message: 'Pet 42 is held by an open order: complete or cancel the order first',
          status: 409,
        },
      }),
    });
    expect(Object.keys(op.responses['412'].content['application/json'].examples)).toEqual([
      'PRECONDITION_FAILED',
    ]);
    expect(op.responses['415'].headers['Accept-Patch']).toBeDefined();
    expect(op.responses['415'].content['application/json'].examples).toEqual({
      UNSUPPORTED_MEDIA_TYPE: expect.objectContaining({
        value: {
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'Content-Type must be application/merge-patch+json or application/json',
          status: 415,
        },
      }),
    });
  });

  it('has a PetPatch schema of optional NewPet fields, at least one, closed to others', () => {
    const { PetPatch, NewPet } = doc.components.schemas;
    expect(PetPatch).toMatchObject({
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
    });
    expect(PetPatch.required).toBeUndefined();
    expect(Object.keys(PetPatch.properties)).toEqual(Object.keys(NewPet.properties));
    expect(PetPatch.properties.name).toEqual(NewPet.properties.name);
    expect(PetPatch.properties.categoryId).toEqual(NewPet.properties.categoryId);
  });

  it('marks getPet deprecated, with an int64 path id and the deprecation headers', () => {
    const op = doc.paths['/pets/{petId}'].get;
    expect(op.deprecated).toBe(true);
    expect(op.parameters).toEqual([
      expect.objectContaining({
        name: 'petId',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ type: 'integer', format: 'int64' }),
      }),
      expect.objectContaining({ name: 'If-None-Match', in: 'header' }),
    ]);
    expect(Object.keys(op.responses['200'].headers)).toEqual([
      'ETag',
      'Cache-Control',
      'Deprecation',
      'Sunset',
      'Link',
      ...RATE_LIMIT_HEADER_NAMES,
    ]);
  });

  it('documents conditional GETs on listPets and getPet: If-None-Match, ETag, and a 304 with the 200 headers and no body', () => {
    for (const path of ['/pets', '/pets/{petId}']) {
      const op = doc.paths[path].get;
      expect(op.parameters).toContainEqual(
        expect.objectContaining({ name: 'If-None-Match', in: 'header', required: false }),
      );
      const ok = op.responses['200'];
      const notModified = op.responses['304'];
      expect(ok.headers.ETag.schema).toMatchObject({ type: 'string' });
      expect(ok.headers['Cache-Control'].schema).toEqual({
        type: 'string',
        enum: ['private, no-cache'],
      });
      expect(notModified.content).toBeUndefined();
      expect(Object.keys(notModified.headers)).toEqual(Object.keys(ok.headers));
    }
    expect(doc.paths['/pets'].post.responses['304']).toBeUndefined();
  });

  it('documents the rate-limit budget on every success and Retry-After on every 429', () => {
    for (const [path, method, success] of [
      ['/pets', 'get', '200'],
      ['/pets', 'post', '201'],
      ['/pets/{petId}', 'get', '200'],
      ['/pets/{petId}', 'patch', '200'],
    ]) {
      const { responses } = doc.paths[path][method];
      expect(Object.keys(responses[success].headers)).toEqual(
        expect.arrayContaining(RATE_LIMIT_HEADER_NAMES),
      );
      expect(Object.keys(responses['429'].headers)).toEqual([
        'Retry-After',
        ...RATE_LIMIT_HEADER_NAMES,
      ]);
    }
  });

  it('shows, for every error response, an example body of each code that status carries', () => {
    for (const item of Object.values<Json>(doc.paths)) {
      for (const op of Object.values<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (Number(status) < 400) continue;
          const examples = Object.values<Json>(response.content['application/json'].examples);
          expect(examples.length).toBeGreaterThan(0);
          for (const { value } of examples) {
            expect(value).toEqual({
              code: expect.any(String),
              message: expect.any(String),
              status: Number(status),
            });
            expect(doc.components.schemas.ErrorCode.enum).toContain(value.code);
          }
        }
      }
    }
  });

  it('describes every parameter and schema field, and closes NewPet to unknown fields', () => {
    for (const item of Object.values<Json>(doc.paths))
      for (const op of Object.values<Json>(item))
        for (const parameter of op.parameters ?? []) expect(parameter.description).toBeTruthy();
    for (const name of ['Pet', 'NewPet', 'PetPatch', 'Error', 'NewWebhook', 'Webhook'])
      for (const property of Object.values<Json>(doc.components.schemas[name].properties))
        expect(property.description).toBeTruthy();
    expect(doc.components.schemas.NewPet.additionalProperties).toBe(false);
  });

  it('gives an example of every field of the webhook schemas', () => {
    for (const name of ['NewWebhook', 'Webhook', 'WebhookWithSecret'])
      for (const [field, property] of Object.entries<Json>(doc.components.schemas[name].properties))
        expect(property.example, `${name}.${field}`).toBeDefined();
  });

  it('documents the rate-limit budget on every webhook success', () => {
    for (const [path, method, success] of [
      ['/webhooks', 'post', '201'],
      ['/webhooks', 'get', '200'],
      ['/webhooks/{id}', 'get', '200'],
      ['/webhooks/{id}', 'delete', '204'],
      ['/webhooks/{id}/rotate-secret', 'post', '200'],
    ]) {
      const { responses } = doc.paths[path][method];
      expect(Object.keys(responses[success].headers)).toEqual(RATE_LIMIT_HEADER_NAMES);
    }
  });

  it('describes a webhook delivery as the petEvent callback of createWebhook: a signed PetEvent, CategoryEvent or OrderEvent POSTed to the url', () => {
    const op = doc.paths['/webhooks'].post;
    expect(Object.keys(op.callbacks)).toEqual(['petEvent']);
    expect(Object.keys(op.callbacks.petEvent)).toEqual(['{$request.body#/url}']);
    const delivery = op.callbacks.petEvent['{$request.body#/url}'];
    expect(Object.keys(delivery)).toEqual(['post']);
    const { post } = delivery;
    expect(post.operationId).toBe('receivePetEvent');
    expect(post.security).toEqual([]);
    expect(post.requestBody.required).toBe(true);
    expect(Object.keys(post.requestBody.content)).toEqual(['application/json']);
    const body = post.requestBody.content['application/json'];
    expect(body.schema.oneOf).toEqual([
      { $ref: '#/components/schemas/PetEvent' },
      { $ref: '#/components/schemas/CategoryEvent' },
      { $ref: '#/components/schemas/OrderEvent' },
    ]);
    expect(Object.keys(body.example)).toEqual(
      Object.keys(doc.components.schemas.PetEvent.properties),
    );
    expect(doc.components.schemas.PetEventType.enum).toContain(body.example.type);
    expect(
      post.parameters.map(({ name, in: location, required }: Json) => [name, location, required]),
    ).toEqual([
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ]);
    for (const parameter of post.parameters) {
      expect(parameter.description).toBeTruthy();
      expect(parameter.example).toMatch(new RegExp(parameter.schema.pattern));
    }
    // The example headers are the example body's, signed with the example secret.
    const [id, timestamp, signature] = post.parameters.map(({ example }: Json) => example);
    const secret = doc.components.schemas.WebhookWithSecret.properties.secret.example;
    const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'));
    hmac.update(`${id}.${timestamp}.${JSON.stringify(body.example)}`);
    expect([id, Number(timestamp) * 1000]).toEqual([
      body.example.id,
      Date.parse(body.example.timestamp) - (Date.parse(body.example.timestamp) % 1000),
    ]);
    expect(signature).toBe(`v1,${hmac.digest('base64')}`);
    expect(post.description).toContain('`Content-Type: application/json`');
    // A JavaScript object lists integer-like keys first, whatever order they were written in.
    expect(Object.keys(post.responses).sort()).toEqual(['2XX', '410', '429', '503', 'default']);
    expect(post.responses['410'].description).toMatch(/^Disables the webhook/);
    for (const status of ['429', '503']) {
      expect(post.responses[status].description).toMatch(/retried, no sooner than `Retry-After`/);
      expect(Object.keys(post.responses[status].headers)).toEqual(['Retry-After']);
    }
    expect(post.responses.default.description).toMatch(/^Any other status.*retried/);
  });

  it('documents the optional Idempotency-Key header on createPet', () => {
    const op = doc.paths['/pets'].post;
    expect(op.parameters).toEqual([
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: expect.objectContaining({
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: '^[\\x20-\\x7E]+$',
        }),
      }),
    ]);
    expect(Object.keys(op.responses['201'].headers)).toEqual([
      'ETag',
      'Idempotent-Replayed',
      ...RATE_LIMIT_HEADER_NAMES,
    ]);
  });

  it('has the schemas of the seed with their required fields and int64 formats', () => {
    const { PetStatus, NewPet, Pet, Error } = doc.components.schemas;
    expect(PetStatus).toEqual({ type: 'string', enum: ['available', 'pending', 'sold'] });
    expect(NewPet.required).toEqual(['name', 'categoryId']);
    expect(NewPet.properties.categoryId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(NewPet.properties.status).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/PetStatus' }],
    });
    expect(Pet.required).toEqual(['id', 'name', 'categoryId']);
    expect(Pet.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(Error.required).toEqual(['code', 'message', 'status']);
    expect(Error.properties.status.type).toBe('integer');
  });

  it("describes 403 FORBIDDEN: a valid key without the operation's scope", () => {
    for (const item of Object.values<Json>(doc.paths)) {
      for (const op of Object.values<Json>(item)) {
        expect(op.responses['403'].description).toBe(
          '`FORBIDDEN`: The API key is valid but lacks the scope this operation needs; the message names it. Nothing was changed.',
        );
        expect(op.responses['403'].content['application/json'].examples.FORBIDDEN.value).toEqual({
          code: 'FORBIDDEN',
          message: 'This API key lacks the scope pets:write',
          status: 403,
        });
      }
    }
  });

  it('shows each operation only the examples of the codes it sends for a status', () => {
    const examples = (path: string, method: string, status: string) =>
      Object.keys(doc.paths[path][method].responses[status].content['application/json'].examples);
    expect(examples('/pets/{petId}', 'get', '410')).toEqual(['GONE']);
    expect(examples('/events', 'get', '410')).toEqual(['CURSOR_EXPIRED']);
    expect(examples('/events/stream', 'get', '410')).toEqual(['CURSOR_EXPIRED']);
    expect(examples('/webhooks', 'post', '409')).toEqual(['WEBHOOK_LIMIT_REACHED']);
    expect(
      doc.paths['/webhooks'].post.responses['409'].content['application/json'].examples
        .WEBHOOK_LIMIT_REACHED.value,
    ).toEqual({
      code: 'WEBHOOK_LIMIT_REACHED',
      message: 'The store has 100 webhooks, the most it may have: delete one first',
      status: 409,
    });
  });

  it('lists every error code as an enum', () => {
    expect(doc.components.schemas.ErrorCode.enum).toEqual([
      'VALIDATION_FAILED',
      'MALFORMED_JSON',
      'UNAUTHORIZED',
      'FORBIDDEN',
      'NOT_FOUND',
      'METHOD_NOT_ALLOWED',
      'INVALID_TRANSITION',
      'PET_HELD',
      'PET_NOT_AVAILABLE',
      'ORDER_NOT_OPEN',
      'CATEGORY_NAME_TAKEN',
      'WEBHOOK_LIMIT_REACHED',
      'GONE',
      'CURSOR_EXPIRED',
      'PRECONDITION_FAILED',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'IDEMPOTENCY_KEY_REUSED',
      'RATE_LIMITED',
      'INTERNAL_ERROR',
      'SERVICE_UNAVAILABLE',
    ]);
  });
});

describe('docs endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { PUBLIC_BASE_URL: 'http://127.0.0.1:3999/v1' });
  });
  afterAll(() => t?.close());

  it('serves Swagger UI at /docs without a key', async () => {
    const response = await t.request('GET', '/docs', { key: null });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('swagger-ui');
  });

  it('serves the document at /docs-json without a key, with servers from config', async () => {
    const response = await t.request('GET', '/docs-json', { key: null });
    expect(response.statusCode).toBe(200);
    expect(response.json().servers[0]).toEqual({
      url: 'http://127.0.0.1:3999/v1',
      description: 'Production',
    });
  });
});
