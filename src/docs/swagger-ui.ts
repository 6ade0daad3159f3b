import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';

/** Where the installed swagger-ui-dist package keeps its files. */
const SWAGGER_UI_DIST = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/**
 * The files of swagger-ui-dist the page loads, and nothing else of the package: no manifest, no
 * README, no source maps, no stock initializer (which points at the public petstore).
 */
export const SWAGGER_UI_ASSETS = [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
] as const;

/** The script that starts Swagger UI on the service's own document. */
const INITIALIZER = 'swagger-ui-init.js';

/**
 * Serves Swagger UI at `path` (and `path/`): the page, its initializer and the allowed assets, each
 * at a route of its own. Any other address under `path` matches no route, so it gets the 404 every
 * unknown route gets; there is no file lookup that a `..` or an encoded slash could steer.
 */
export function serveSwaggerUi(
  fastify: FastifyInstance,
  path: string,
  title: string,
  document: OpenAPIObject,
): void {
  const lastSegment = path.split('/').pop()!;
  // The page refers to its files relatively, so it works under any prefix a proxy adds.
  const pageAtPath = swaggerUiPage(title, `./${lastSegment}/`);
  const pageUnderPath = swaggerUiPage(title, './');
  const initializer = swaggerUiInitializer(document);
  void fastify.register(async (scope) => {
    // Only for reply.sendFile, with names from the list above: `serve: false` adds no route.
    await scope.register(fastifyStatic, { root: SWAGGER_UI_DIST, serve: false });
    scope.get(path, (_request, reply) => reply.type(HTML).send(pageAtPath));
    scope.get(`${path}/`, (_request, reply) => reply.type(HTML).send(pageUnderPath));
    scope.get(`${path}/${INITIALIZER}`, (_request, reply) =>
      reply.type(JAVASCRIPT).send(initializer),
    );
    for (const file of SWAGGER_UI_ASSETS)
      scope.get(`${path}/${file}`, (_request, reply) => reply.sendFile(file));
  });
}

const HTML = 'text/html; charset=utf-8';
const JAVASCRIPT = 'application/javascript; charset=utf-8';

/** The page: the stylesheet, the favicons, the two Swagger UI scripts and the initializer. */
function swaggerUiPage(title: string, base: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>${title}</title>
  <link rel="stylesheet" type="text/css" href="${base}swagger-ui.css">
  <link rel="icon" type="image/png" href="${base}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${base}favicon-16x16.png" sizes="16x16">
  <style>
    html { box-sizing: border-box; overflow-y: scroll; }
    *, *:before, *:after { box-sizing: inherit; }
    body { margin: 0; background: #fafafa; }
    .swagger-ui .topbar .download-url-wrapper { display: none; }
  </style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}swagger-ui-bundle.js"></script>
  <script src="${base}swagger-ui-standalone-preset.js"></script>
  <script src="${base}${INITIALIZER}"></script>
</body>
</html>
`;
}

/**
 * Starts Swagger UI on the document itself, not on a URL it would fetch; the key entered under
 * Authorize is kept across reloads (docs/security.md, "API2:2023 Broken Authentication").
 */
function swaggerUiInitializer(document: OpenAPIObject): string {
  const options = {
    spec: document,
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'StandaloneLayout',
    persistAuthorization: true,
  };
  return `window.onload = function () {
  window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(options)}, {
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  }));
};
`;
}
