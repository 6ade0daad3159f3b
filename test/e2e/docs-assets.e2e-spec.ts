import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

/** Where the Swagger UI files come from: the swagger-ui-dist package the app depends on. */
const SWAGGER_UI_DIST = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/** The files of swagger-ui-dist the page loads, each with the Content-Type it is served with. */
const ASSETS: [file: string, contentType: string][] = [
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
];
const ASSET_FILES = ASSETS.map(([file]) => file);

/** Every other file of the package: its manifest, README, source maps, the stock initializer… */
const OTHER_PACKAGE_FILES = readdirSync(SWAGGER_UI_DIST).filter(
  (file) => !ASSET_FILES.includes(file),
);

const NOT_FOUND = { code: 'NOT_FOUND', message: 'No such route', status: 404 };
const MALFORMED_URL = {
  code: 'VALIDATION_FAILED',
  message: 'The request URL is malformed',
  status: 400,
};

/** Paths that try to leave /docs, as a client sends them, byte for byte. */
const TRAVERSALS = [
  '/docs/../package.json',
  '/docs/./../package.json',
  '/docs/../../../../etc/passwd',
  '/docs/swagger-ui.css/../package.json',
  '/docs/%2e%2e/package.json',
  '/docs/%2E%2E/package.json',
  '/docs/.%2e/package.json',
  '/docs/%2e%2e/%2e%2e/package.json',
  '/docs/..%2fpackage.json',
  '/docs/..%2Fpackage.json',
  '/docs/%2e%2e%2fpackage.json',
  '/docs/%252e%252e%252fpackage.json',
  '/docs/..%252fpackage.json',
  '/docs/..\\package.json',
  '/docs/.\\./package.json',
  '/docs/..%5cpackage.json',
  '/docs/%5c..%5cpackage.json',
  '/docs/%2e%2e%5cpackage.json',
  '/docs/..%255cpackage.json',
  '/docs//etc/passwd',
  '/docs/%2fetc%2fpasswd',
  '/docs/package.json%00.css',
  '/docs/..;/package.json',
];

interface RawAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** A GET whose path goes out exactly as written: fetch and inject would resolve the dot segments. */
function getRaw(baseUrl: string, path: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, path, method: 'GET' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          contentType: response.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

describe.each(ENGINES)('Swagger UI assets under /docs [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await startTestApp(engine);
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
  });
  afterAll(() => t?.close());

  it.each(ASSETS)(
    'serves %s without a key as %s, the file of swagger-ui-dist, with its validators and no-store',
    async (file, contentType) => {
      const response = await t.request('GET', `/docs/${file}`, { key: null });

      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe(contentType);
      expect(response.rawPayload.equals(readFileSync(join(SWAGGER_UI_DIST, file)))).toBe(true);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.etag).toMatch(/^W\/"[\w-]+"$/);
      expect(new Date(String(response.headers['last-modified'])).getTime()).not.toBeNaN();

      const again = await t.request('GET', `/docs/${file}`, {
        key: null,
        headers: { 'if-none-match': String(response.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    },
  );

  it.each(['/docs', '/docs/'])(
    'serves the page at %s without a key; it loads exactly the allowed assets and the service initializer',
    async (page) => {
      const response = await t.request('GET', page, { key: null });

      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('<title>Animal Store API</title>');
      const loaded = [...response.body.matchAll(/\s(?:src|href)=["']([^"']+)["']/g)].map(
        ([, reference]) => new URL(reference, `http://host${page}`).pathname,
      );
      expect(loaded.sort()).toEqual(
        [...ASSET_FILES, 'swagger-ui-init.js'].map((file) => `/docs/${file}`).sort(),
      );
    },
  );

  it("serves the service's own initializer at /docs/swagger-ui-init.js: the served document, never the stock petstore one", async () => {
    const document = await t.request('GET', '/docs-json', { key: null });
    const response = await t.request('GET', '/docs/swagger-ui-init.js', { key: null });

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(response.body).toContain(document.body);
    expect(response.body).toContain('"persistAuthorization":true');
    expect(response.body).not.toContain('petstore');
    const stock = await t.request('GET', '/docs/swagger-initializer.js', { key: null });
    expect(stock.statusCode).toBe(404);
    expect(stock.body).not.toContain('petstore');
  });

  it.each([
    ...OTHER_PACKAGE_FILES.map((file) => `/docs/${file}`),
    '/docs/docs/swagger-ui-init.js',
    '/docs/no-such-file.js',
    '/docs/dist/swagger-ui.css',
  ])('answers %s, with or without a key, with the 404 Error body', async (path) => {
    for (const key of [null, t.key]) {
      const response = await t.request('GET', path, { key });

      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.json()).toEqual(NOT_FOUND);
    }
  });

  it('lists the package files that must not be served: manifest, README, source maps, stock initializer', () => {
    expect(OTHER_PACKAGE_FILES).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'swagger-ui.js.map',
        'swagger-ui-bundle.js.map',
        'swagger-initializer.js',
        'index.html',
      ]),
    );
  });

  it.each(TRAVERSALS)(
    'answers %s, sent as is over a socket, with the 404 Error body and no word of an API key',
    async (path) => {
      const answer = await getRaw(baseUrl, path);

      expect(answer).toEqual({
        status: 404,
        contentType: 'application/json; charset=utf-8',
        body: JSON.stringify(NOT_FOUND),
      });
      expect(answer.body).not.toMatch(/api key/i);
    },
  );

  it('answers a traversal that is not valid percent-encoding with the 400 every malformed URL gets', async () => {
    const answer = await getRaw(baseUrl, '/docs/..%c0%afpackage.json');

    expect(answer).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify(MALFORMED_URL),
    });
  });

  it('answers another method on an asset with 405 and Allow: GET, HEAD', async () => {
    const response = await t.request('POST', '/docs/swagger-ui.css', { key: null });

    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.json()).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: 'Method POST is not allowed here; use GET, HEAD',
      status: 405,
    });
  });
});
