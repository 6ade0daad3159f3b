import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** `collect-statements.ts`, bundled by global-setup.ts next to open-database-at.js. */
const COLLECT_STATEMENTS = 'test-results/support/collect-statements.js';

describe('SQLite statements freed by the garbage collector', () => {
  it('leave the process alive on the Node running the tests', async () => {
    const finished = await new Promise<{
      code: number | null;
      signal: string | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile('node', ['--expose-gc', COLLECT_STATEMENTS], (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          stdout,
          stderr,
        }),
      );
    });
    expect(finished).toEqual({ code: 0, signal: null, stdout: 'alive\n', stderr: '' });
    // Twenty rounds of allocation and full collections: 10–20 s of CPU on a 2-core VM.
  }, 60_000);
});
