// `npm run build`: compiles src/ with SWC and bundles the entry points into dist/ with esbuild.
//
// Why a bundle: loading the dependency tree file by file dominates the cold start
// (docs/performance.md, "The build"). Why SWC: it emits the decorator metadata Nest's dependency injection
// reads (esbuild cannot), and it is the compiler the tests use.
//
// `--if-stale` skips the build when no file the last build read has changed since: `npm start` and
// `npm run apikey` call it first, so an up-to-date tree starts at once. `--watch` rebuilds on every
// change and restarts the server (`npm run start:dev`).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { EXTERNAL } from './bundle-externals.mjs';

const ENTRY_POINTS = {
  main: 'src/main.ts',
  'api-key.cli': 'src/auth/api-key.cli.ts',
  'write-openapi': 'src/write-openapi.ts',
};
const OUT_DIR = 'dist';
/** What the last build read, with the time it started: the input list for `--if-stale`. */
const INPUTS_FILE = `${OUT_DIR}/build-inputs.json`;
/** Files that change the output without being imported. */
const BUILD_CONFIG = [
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/bundle-externals.mjs',
  'scripts/swc-typescript.mjs',
];

if (process.argv.includes('--if-stale') && isUpToDate()) process.exit(0);
// Loaded only when there is something to build: the check above must stay quick.
const { context } = await import('esbuild');
const { swcTypeScript } = await import('./swc-typescript.mjs');

const watch = process.argv.includes('--watch');
let startedAt = Date.now();
let server;
rmSync(OUT_DIR, { recursive: true, force: true });
const builder = await context({
  entryPoints: ENTRY_POINTS,
  outdir: OUT_DIR,
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // License comments go to a file of their own beside each output, not into the served source.
  legalComments: 'external',
  // No whitespace and no comments: a comment with one non-ASCII character would make V8 hold the
  // whole chunk's source at two bytes a character (docs/performance.md, "Start-up and memory").
  // Names are kept, so stack frames still name functions; the source maps place them in src/.
  minifyWhitespace: true,
  // No keepNames: it wraps every function the frameworks create per request (docs/performance.md,
  // "The build").
  // Nothing reads our class names: schemas, entities and migrations are named explicitly.
  metafile: true,
  logLevel: 'warning',
  plugins: [swcTypeScript, { name: 'after-build', setup: (b) => b.onEnd(afterBuild) }],
  external: EXTERNAL,
  // Bundled CommonJS code calls require() for Node built-ins and the externals above.
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
  },
});
if (watch) {
  await builder.watch();
} else {
  await builder.rebuild();
  await builder.dispose();
}

/** Records what this build read; with --watch (`npm run start:dev`) restarts the server on it. */
function afterBuild({ errors, metafile }) {
  if (errors.length > 0) return;
  const inputs = [...Object.keys(metafile.inputs), ...BUILD_CONFIG];
  writeFileSync(INPUTS_FILE, JSON.stringify({ startedAt, inputs }));
  startedAt = Date.now();
  if (!watch) return;
  const start = () => {
    server = spawn(process.execPath, [`${OUT_DIR}/main.js`], { stdio: 'inherit' });
  };
  if (server) server.once('exit', start).kill();
  else start();
}

function isUpToDate() {
  if (!existsSync(INPUTS_FILE)) return false;
  const { startedAt, inputs } = JSON.parse(readFileSync(INPUTS_FILE, 'utf8'));
  const outputs = Object.keys(ENTRY_POINTS).map((name) => `${OUT_DIR}/${name}.js`);
  return (
    outputs.every((file) => existsSync(file)) &&
    inputs.every((file) => existsSync(file) && statSync(file).mtimeMs < startedAt)
  );
}
