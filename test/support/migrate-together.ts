import { execFile } from 'node:child_process';
import type { Finished } from './processes.js';

/** `open-database-at.ts`, bundled by global-setup.ts so that it runs as a process of its own. */
export const OPEN_DATABASE_AT = 'test-results/support/open-database-at.js';

/**
 * Starts `count` processes that each open (and so migrate) one database at the same instant.
 * Servers spawned together reach their migrations up to a second apart (loading the build), which
 * hides a race there; these processes load first and then wait for one shared moment.
 */
export function migrateTogether(databaseUrl: string, count: number): Promise<Finished[]> {
  // Time for every process to load TypeORM and the driver first, on a busy two-core machine.
  const at = Date.now() + 2_500;
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Finished>((resolve) => {
          execFile(
            'node',
            [OPEN_DATABASE_AT, String(at)],
            { env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl } },
            (error, stdout, stderr) =>
              resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
          );
        }),
    ),
  );
}
