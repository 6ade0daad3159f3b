import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import type { TestProject } from 'vitest/node';
import { swcTypeScript } from '../../scripts/swc-typescript.mjs';
import { OPEN_DATABASE_AT } from './migrate-together.js';
import { startPgCluster } from './pg-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL server of each worker, by VITEST_POOL_ID − 1 (test-database.ts). */
    postgresServers: string[];
  }
}

interface Setup {
  postgresServers: string[];
  teardown: () => Promise<void>;
}

/**
 * Vitest runs the global setup once for the run and once for each project (vitest.config.ts); the
 * first does the work, which the others share through this process-wide key.
 */
const SETUP = Symbol.for('animal-store.test-global-setup');

/**
 * Refuses a TEST_DATABASE_URL that does not name a test database (each suite creates and drops
 * databases through it), builds dist/ once for the tests that run the real CLI and server, bundles
 * the helper processes, and gives each worker a PostgreSQL server of its own.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const shared = globalThis as { [SETUP]?: Promise<Setup> };
  const first = shared[SETUP] === undefined;
  const done = await (shared[SETUP] ??= setUpOnce(project.config.maxWorkers));
  project.provide('postgresServers', done.postgresServers);
  if (first) return done.teardown;
}

async function setUpOnce(workers: number): Promise<Setup> {
  const url = process.env.TEST_DATABASE_URL;
  if (url && !/test/i.test(new URL(url).pathname)) {
    throw new Error(
      `TEST_DATABASE_URL must point at a database whose name contains "test", got ${new URL(url).pathname}`,
    );
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  await build({
    entryPoints: ['test/support/open-database-at.ts', 'test/support/collect-statements.ts'],
    outdir: dirname(OPEN_DATABASE_AT),
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    logLevel: 'warning',
    plugins: [swcTypeScript],
  });
  // Files running at once on one server would hold back each other's events: PostgreSQL serves an
  // event once every transaction on the server that began before it has ended, other databases'
  // included (docs/events.md, "Order"). One file at a time uses TEST_DATABASE_URL's server.
  if (!url || workers <= 1) return { postgresServers: url ? [url] : [], teardown: async () => {} };
  const servers = await Promise.all(Array.from({ length: workers }, () => startPgCluster()));
  return {
    postgresServers: servers.map((server) => server.url),
    teardown: async () => {
      await Promise.all(servers.map((server) => server.destroy()));
    },
  };
}
