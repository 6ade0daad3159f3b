// Writes src/api-schema.ts: the TypeScript types of the repository's committed openapi.json, as
// openapi-typescript generates them, formatted with the repository's Prettier settings so that
// `prettier --check .` accepts the committed file as it is.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import * as prettier from 'prettier';

export const OPENAPI_DOCUMENT = new URL('../../../openapi.json', import.meta.url);
export const SCHEMA_TYPES_FILE = new URL('../src/api-schema.ts', import.meta.url);

/**
 * The generated types for an OpenAPI document: a file URL, or the parsed document itself.
 * @param {URL | import('openapi-typescript').OpenAPI3} document
 * @returns {Promise<string>}
 */
export async function renderSchemaTypes(document = OPENAPI_DOCUMENT) {
  const source = COMMENT_HEADER + astToString(await openapiTS(document));
  const filepath = fileURLToPath(SCHEMA_TYPES_FILE);
  const options = await prettier.resolveConfig(filepath);
  return prettier.format(source, { ...options, filepath });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await writeFile(SCHEMA_TYPES_FILE, await renderSchemaTypes());
  process.stdout.write(`wrote ${fileURLToPath(SCHEMA_TYPES_FILE)}\n`);
}
