// Runs src/main.ts. Node 20 cannot run TypeScript, so esbuild first bundles it, with
// standardwebhooks, into one temporary ES module. esbuild strips the types without checking them:
// `tsc -p examples/webhook-receiver/tsconfig.json` does that.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = mkdtempSync(join(tmpdir(), 'animal-store-webhook-receiver-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const bundle = join(dir, 'main.mjs');

await build({
  entryPoints: [fileURLToPath(new URL('../src/main.ts', import.meta.url))],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  logLevel: 'warning',
});
// Stack traces then name the lines of src/*.ts, not of the bundle.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(bundle).href);
