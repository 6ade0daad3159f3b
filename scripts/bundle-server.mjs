// Bundles the compiled server (dist/main.js, from tsc) into one file, dist/server.mjs, which is
// what `npm start` runs. Resolving and loading ~2,300 small ESM/CJS files (esbuild's count of its inputs) costs more start-up time
// than everything else together; one file starts in a fraction of it (see README, Performance).
// tsc still compiles first: esbuild cannot emit the decorator metadata Nest's injection relies on.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// keepNames makes esbuild call `__name` for every class and for every function it wraps, including
// closures Fastify, Nest and Passport create per request; redefining `name` there cost ~15 % of a
// request's CPU (bench/README). Classes keep the real name (Nest and Swagger read class names;
// esbuild's renaming would show up as "PetsService2"); other functions keep whatever name the
// bundle gives them, which only shows in stack traces.
const KEEP_NAMES_HELPER =
  'var __name = (target, value) => __defProp(target, "name", { value, configurable: true });';
const CLASS_NAME_HELPERS =
  'var __className = (target, value) => __defProp(target, "name", { value, configurable: true });\n' +
  'var __name = (target) => target;';
const CLASS_NAME_CALL = /static \{\n(\s*)__name\(this, "/g;

// @nestjs/typeorm reads two TypeORM 0.3 exports (undefined in TypeORM 1) through a run-time
// require('typeorm'), which loaded the whole unbundled package a second time at start: about a
// quarter of start-up CPU. The same two lookups, on the bundled TypeORM.
const TYPEORM_COMPAT = /@nestjs[\\/]typeorm[\\/]dist[\\/]common[\\/]typeorm-compat\.js$/;
const bundledTypeormCompat = {
  name: 'bundled-typeorm-compat',
  setup(builder) {
    builder.onLoad({ filter: TYPEORM_COMPAT }, (args) => ({
      resolveDir: dirname(args.path),
      loader: 'js',
      contents: [
        "import * as typeorm from 'typeorm';",
        'const removedInTypeorm1 = (name) => typeorm[name];',
        "export const Connection = removedInTypeorm1('Connection');",
        "export const AbstractRepository = removedInTypeorm1('AbstractRepository');",
      ].join('\n'),
    }));
  },
};

// V8 keeps a script's whole source in the heap, as one-byte (Latin-1) characters only if every
// character fits; a single non-ASCII one makes it two bytes each. esbuild escapes strings but not
// comments or regular expression literals (class-validator's locale tables), so the bundle's
// 8 MB of source held 16 MB of heap. \uXXXX means the same code unit in a comment, a string or a
// regular expression, with or without its u flag; not after a backslash, which the build refuses.
const escapeNonAscii = (text) => {
  if (/\\[\u0080-\uffff]/.test(text))
    throw new Error(
      'a non-ASCII character follows a backslash: escaping it would change its meaning',
    );
  return text.replace(
    /[\u0080-\uffff]/g,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
};

const { outputFiles } = await build({
  entryPoints: ['dist/main.js'],
  outfile: 'dist/server.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  write: false,
  plugins: [bundledTypeormCompat],
  // Nest and Swagger read class names (schema names, log contexts); bundling must not rename them.
  keepNames: true,
  // Bundled CommonJS code still calls require() for Node built-ins and the externals below.
  banner: {
    js: "import { createRequire as createBannerRequire } from 'node:module'; const require = createBannerRequire(import.meta.url);",
  },
  external: [
    // Native addons and the drivers TypeORM loads by name at run time.
    'better-sqlite3',
    'pg',
    'pg-native',
    // Finds its static files relative to its own directory.
    'swagger-ui-dist',
    // Optional peers that Nest and Fastify import only when an application uses them.
    '@nestjs/microservices',
    '@nestjs/microservices/*',
    '@nestjs/websockets/*',
    '@nestjs/platform-express',
    '@fastify/view',
    '@fastify/multipart',
  ],
});

const [bundle] = outputFiles;
if (!bundle.text.includes(KEEP_NAMES_HELPER)) {
  throw new Error("esbuild's __name helper changed: update KEEP_NAMES_HELPER in this script");
}
writeFileSync(
  bundle.path,
  escapeNonAscii(
    bundle.text
      .replace(KEEP_NAMES_HELPER, CLASS_NAME_HELPERS)
      .replace(CLASS_NAME_CALL, 'static {\n$1__className(this, "'),
  ),
);
