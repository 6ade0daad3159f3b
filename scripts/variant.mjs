import { build } from 'esbuild';
import { swcTypeScript } from './swc-typescript.mjs';
const v = process.argv[2];
const external = [
  'better-sqlite3',
  'pg',
  'pg-native',
  'swagger-ui-dist',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets/*',
  '@nestjs/platform-express',
  '@fastify/view',
  '@fastify/multipart',
];
if (v.includes('ext')) external.push('typeorm', 'class-validator');
if (v.includes('rm')) external.push('reflect-metadata');
await build({
  entryPoints: { main: 'src/main.ts' },
  outdir: `/work/main/tmpv/${v}`,
  bundle: true,
  splitting: v.includes('split'),
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: v.includes('map'),
  keepNames: false,
  logLevel: 'warning',
  plugins: v.includes('swc') ? [swcTypeScript] : [],
  external,
  banner: {
    js: "import { createRequire as cr } from 'node:module'; const require = cr(import.meta.url);",
  },
});
