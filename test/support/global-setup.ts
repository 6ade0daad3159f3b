import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { swcTypeScript } from '../../scripts/swc-typescript.mjs';
import { OPEN_DATABASE_AT } from './migrate-together.js';

/**
 * Refuses a TEST_DATABASE_URL that does not name a test database (each suite creates and drops
 * databases through it), builds dist/ once for the tests that run the real CLI and server, and
 * bundles the helper processes.
 */
export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (url && !/test/i.test(new URL(url).pathname)) {
    throw new Error(
      `TEST_DATABASE_URL must point at a database whose name contains "test", got ${new URL(url).pathname}`,
    );
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  await build({
    entryPoints: ['test/support/open-database-at.ts'],
    outfile: OPEN_DATABASE_AT,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
    plugins: [swcTypeScript],
  });
}
