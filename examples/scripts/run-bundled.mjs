// Runs an example's TypeScript entry point: node examples/scripts/run-bundled.mjs <entry.ts> <name>
// [argument…], the entry relative to the repository root. Node 20 cannot run TypeScript, so esbuild first bundles the entry, with the packages
// it imports, into one temporary ES module, in a directory named after <name>. esbuild strips the
// types without checking them: each example's `tsc -p examples/<example>/tsconfig.json` does that.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPOSITORY_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const [entry, name] = process.argv.slice(2);
if (entry === undefined || name === undefined) {
  console.error('Usage: run-bundled.mjs <entry.ts> <name> [argument…]');
  process.exit(2);
}
// The example reads its own arguments from process.argv.slice(2), as if it had been run directly.
process.argv.splice(2, 2);

const dir = mkdtempSync(join(tmpdir(), `animal-store-${name}-`));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const bundle = join(dir, 'main.mjs');

await build({
  entryPoints: [resolve(REPOSITORY_ROOT, entry)],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  logLevel: 'warning',
});
// Stack traces then name the lines of the example's .ts files, not of the bundle.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(bundle).href);
