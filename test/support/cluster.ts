import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * The [cluster] tests need the Debian packages `npm run cluster` runs (.ci/run installs them) and
 * root, to run PostgreSQL and Patroni as the postgres user. They are PostgreSQL tests, so they run
 * with the other PostgreSQL suites, when TEST_DATABASE_URL is set: a run on SQLite alone skips them.
 */
export const CLUSTER_AVAILABLE =
  Boolean(process.env.TEST_DATABASE_URL) &&
  process.getuid?.() === 0 &&
  ['/usr/bin/patroni', '/usr/bin/etcd', '/usr/sbin/haproxy', '/usr/bin/redis-server'].every(
    (program) => existsSync(program),
  );

export interface ClusterStatus {
  url: string;
  primary: string | null;
  standbys: string[];
  nodes: { name: string; role: string; pgPort: number; restPort: number }[];
  apps: { name: string; port: number; up: boolean }[];
  ports: Record<string, number>;
}

/** One topology of `npm run cluster`, under a temporary directory of its own. */
export interface Cluster {
  url: string;
  key: string;
  /** Runs a harness command and returns the JSON object it printed last. */
  run<T = Record<string, unknown>>(command: string): Promise<T>;
  status(): Promise<ClusterStatus>;
  /** The app instances' log lines of requests that failed with a 500, for a failure's message. */
  internalErrors(): Promise<string[]>;
  /** The last lines each app instance logged (its stdout and stderr), headed by its log's name. */
  logTails(lines: number): Promise<string>;
  down(): Promise<void>;
}

export async function clusterUp(env: Record<string, string> = {}): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-cluster-'));
  const run = async <T>(command: string): Promise<T> => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ['scripts/cluster/cluster.mjs', command],
      { env: { ...process.env, ...env, CLUSTER_DIR: dir }, maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
  };
  const down = async () => {
    await run('down').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const { url, key } = await run<{ url: string; key: string }>('up');
    const appLogs = async () => {
      const names = (await readdir(dir)).filter((name) => /^app\d+\.log$/.test(name)).sort();
      return Promise.all(
        names.map(async (name) => ({ name, text: await readFile(join(dir, name), 'utf8') })),
      );
    };
    const internalErrors = async () =>
      (await appLogs())
        .flatMap(({ text }) => text.split('\n'))
        .filter((line) => line.includes('"status":500'));
    const logTails = async (lines: number) =>
      (await appLogs())
        .map(({ name, text }) => `${name}:\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`)
        .join('\n');
    return {
      url,
      key,
      run,
      status: () => run<ClusterStatus>('status'),
      internalErrors,
      logTails,
      down,
    };
  } catch (error) {
    await down();
    throw error;
  }
}
