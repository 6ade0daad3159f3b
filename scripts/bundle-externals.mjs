// The packages the bundle leaves out and loads from node_modules at run time (scripts/build.mjs);
// the container image takes these, with their dependencies, and nothing else of node_modules
// (scripts/image-node-modules.mjs). A pattern ending in /* stands for every package of a scope.
export const EXTERNAL = [
  // Native addons, and the drivers TypeORM loads by name at run time.
  'better-sqlite3',
  'better-sqlite3-node20',
  'pg',
  'pg-native',
  // @nestjs/typeorm and @nestjs/terminus load TypeORM at run time too; one copy must serve all.
  'typeorm',
  // TypeORM requires it too. Two copies would chain every metadata lookup through both, and Nest
  // looks metadata up on every request.
  'reflect-metadata',
  // Its locale tables are non-ASCII regular expressions, which would make V8 hold the whole bundle
  // source at two bytes per character.
  'class-validator',
  // Finds its static files relative to its own directory.
  'swagger-ui-dist',
  // Loaded only when tracing is on (src/telemetry/tracing.ts), as the SDK ships: one copy of the
  // API for the SDK and for us, and instrumentation hooks on modules loaded from node_modules.
  '@opentelemetry/*',
  // Optional peers that Nest and Fastify import only when an application uses them.
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets/*',
  '@nestjs/platform-express',
  '@fastify/view',
  '@fastify/multipart',
];
