import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

/**
 * Suites that must have the machine to themselves, run one after another once every other file
 * has finished: the cluster test kills PostgreSQL nodes and holds Patroni's failover to a time
 * line, the metrics test holds a webhook's retried delivery to a window of its lag histogram, and
 * the container suites hold the image's start and stop to 3 and 2 seconds; other files' load on
 * two cores would stretch them all.
 */
const ALONE = [
  'test/e2e/cluster/**/*.e2e-spec.ts',
  'test/e2e/metrics.e2e-spec.ts',
  'test/e2e/container/**/*.e2e-spec.ts',
];

/**
 * Suites that run fast-check properties of thousands of requests. Their timeout guards against a
 * hang, not speed (the bench measures speed): a loaded machine stretches a run of 1,500 requests
 * far past the default, which would cut it short while its requests went on into the next test.
 */
const PROPERTY_SUITES = ['test/e2e/hostile-input/**/*.e2e-spec.ts'];
const PROPERTY_TIMEOUT_MS = 180_000 * Math.max(1, Number(process.env.FC_RUNS) || 1);

/**
 * Files run this many at once. Most of an e2e file's time is waiting (on PostgreSQL, timers,
 * child processes, sockets), not CPU, so more files than cores share the machine well
 * (docs/testing.md, "How vitest runs").
 */
const FILES_AT_ONCE = 4;

export default defineConfig({
  // esbuild cannot emit decorator metadata, which Nest's DI and class-validator need.
  plugins: [swc.vite({ module: { type: 'es6' } })],
  test: {
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
    maxWorkers: FILES_AT_ONCE,
    // `npm run test:unit` runs the first project, `npm run test:e2e` the others.
    projects: [
      {
        extends: true,
        // Unit files share nothing a file sets up, so a worker loads the modules once for all of
        // them: a third of the project's CPU time otherwise (docs/testing.md, "How vitest runs").
        test: { name: 'unit', include: ['test/unit/**/*.spec.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.e2e-spec.ts'],
          exclude: [...ALONE, ...PROPERTY_SUITES],
          // A worker loads the application once for all its files, not once for each: every file
          // builds its own app, databases and ports, so they share nothing but the loaded code.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-properties',
          include: PROPERTY_SUITES,
          isolate: false,
          testTimeout: PROPERTY_TIMEOUT_MS,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-alone',
          include: ALONE,
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
