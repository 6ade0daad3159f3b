// Bundles the compiled server (dist/main.js, from tsc) into one file, dist/server.mjs, which is
// what `npm start` runs. Resolving and loading ~2,300 small ESM/CJS files (esbuild's count of its inputs) costs more start-up time
// than everything else together; one file starts in a fraction of it (see README, Performance).
// tsc still compiles first: esbuild cannot emit the decorator metadata Nest's injection relies on.
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/main.js'],
  outfile: 'dist/server.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
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
