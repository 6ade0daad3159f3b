import type { INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  SwaggerModule,
} from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SCOPES_EXTENSION } from '../auth/require-scope.decorator.js';
import { ErrorDto } from '../errors/error.dto.js';
import type { AppConfig } from '../config/app-config.js';
import { serveSwaggerUi } from './swagger-ui.js';

const API_VERSION_PATH = '/v1';

/** Where Swagger UI is served; the document is at `/<DOCS_PATH>-json`. */
export const DOCS_PATH = 'docs';

/** The OpenAPI document, generated from the controllers and DTOs. */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const options = new DocumentBuilder()
    .setTitle('Animal Store API')
    .setDescription(
      'The animal catalogue of a store: list animals (filtered by availability), add an animal, look one up. ' +
        'Every operation needs an API key sent as `Authorization: Bearer <API_KEY>`; every error has the `Error` body.',
    )
    .setVersion('1.0.0')
    // A private service (package.json: UNLICENSED): the name says so; Redocly's recommended rules
    // want a license with a URL (docs/api-design.md, "The OpenAPI document").
    .setLicense('Proprietary', 'https://api.animal-store.example/license')
    .addServer(config.publicBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addTag('animals', 'The animal catalogue.')
    .addTag('categories', 'Names for the category ids animals carry.')
    .addTag('orders', 'Holding an animal for a buyer, then selling or releasing it.')
    .addTag('events', 'Changes of the catalogue, in the order they were committed.')
    .addTag('webhooks', 'Changes of the catalogue POSTed to your URL, signed, as they commit.')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key',
        description: 'An API key: `pets_<prefix>_<secret>`.',
      },
      'bearerAuth',
    )
    .build();
  const document = SwaggerModule.createDocument(app, options, { extraModels: [ErrorDto] });
  return withScopesDescribed(withClosedRequestBodies(withPathsRelativeToServers(document)));
}

/** Serves Swagger UI at /docs and the document at /docs-json; both public. */
export function setupDocs(app: NestFastifyApplication, document: OpenAPIObject): void {
  // @nestjs/swagger's own UI would serve all of swagger-ui-dist under /docs; ours serves a list.
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: `${DOCS_PATH}-json`,
    raw: ['json'],
    ui: false,
  });
  serveSwaggerUi(app.getHttpAdapter().getInstance(), `/${DOCS_PATH}`, 'Animal Store API', document);
}

/**
 * A request body with a field the schema does not name is refused, and a patch must name one
 * (docs/api-design.md, "Validation"); the schemas say so, which @nestjs/swagger has no decorator
 * for.
 */
function withClosedRequestBodies(document: OpenAPIObject): OpenAPIObject {
  const schemas = document.components?.schemas ?? {};
  return {
    ...document,
    components: {
      ...document.components,
      schemas: {
        ...schemas,
        NewPet: { ...schemas.NewPet, additionalProperties: false },
        PetPatch: { ...schemas.PetPatch, minProperties: 1, additionalProperties: false },
        NewWebhook: { ...schemas.NewWebhook, additionalProperties: false },
      },
    },
  };
}

/** @nestjs/swagger's operation type names no `x-` fields, though `ApiExtension` writes them. */
type ScopedOperation = OperationObject & { [SCOPES_EXTENSION]?: readonly string[] };

/**
 * Each operation's description says which API-key scope it needs (docs/api-design.md, "API
 * keys"), taken from its `x-required-scopes`, which `@RequireScope()` writes.
 */
function withScopesDescribed(document: OpenAPIObject): OpenAPIObject {
  const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
  for (const item of Object.values(document.paths)) {
    for (const operation of methods.map((method): ScopedOperation | undefined => item[method])) {
      const scopes = operation?.[SCOPES_EXTENSION];
      if (!operation || !scopes?.length) continue;
      const needs = `Needs an API key with the scope ${scopes.map((scope) => `\`${scope}\``).join(', ')}.`;
      operation.description = operation.description
        ? `${operation.description}\n\n${needs}`
        : needs;
    }
  }
  return document;
}

/**
 * Every server URL ends in /v1 (docs/api-design.md, "The OpenAPI document"), so paths in the
 * document are relative to it: `/pets`, not `/v1/pets`.
 */
function withPathsRelativeToServers(document: OpenAPIObject): OpenAPIObject {
  const paths = Object.fromEntries(
    Object.entries(document.paths).map(([path, item]) => [
      path.replace(new RegExp(`^${API_VERSION_PATH}(?=/)`), ''),
      item,
    ]),
  );
  return { ...document, paths };
}
