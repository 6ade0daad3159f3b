import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createApp } from './app.js';
import { loadConfig } from './config/app-config.js';

/**
 * Writes `openapi.json`, the committed contract, as the app serves it at /docs-json with the
 * production and staging servers (no .env: its local values are for development only).
 */
export const OPENAPI_FILE = 'openapi.json';

export async function renderOpenApiDocument(): Promise<string> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' });
  const app = await createApp(config);
  try {
    const response = await app.inject({ method: 'GET', url: '/docs-json' });
    return `${JSON.stringify(response.json(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPENAPI_FILE, await renderOpenApiDocument());
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}
