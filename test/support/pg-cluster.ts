import { execFile } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const execFileAsync = promisify(execFile);

/**
 * A throw-away PostgreSQL server of its own, in a temporary directory on a free port, so a test can
 * stop and start it without touching the shared server other suites use.
 */
export interface PgCluster {
  /** A DATABASE_URL for the app and the CLI: database `animal_store_test` on this cluster. */
  url: string;
  port: number;
  /** `fast` is an orderly shutdown (what a restart does); `immediate` is a crash (no checkpoint). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops the server if it runs and removes every file. */
  destroy(): Promise<void>;
}

const DATABASE = 'animal_store_test';

/** initdb, start (trust auth, loopback only, fsync off) and create an empty database. */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = await newestPostgresBin();
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const port = await freePort();
  // initdb refuses to run as root: the cluster then belongs to the postgres OS user.
  const asOwner = process.getuid?.() === 0 ? await ownedByPostgres(dir) : undefined;
  const postgresTool = (tool: string, ...args: string[]) => {
    const command = [join(bin, tool), ...args];
    const [file, ...rest] = asOwner ? [...asOwner, ...command] : command;
    return execFileAsync(file, rest);
  };
  const serverOptions = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    // Saves time, and loses nothing unless the machine itself crashes. synchronous_commit stays on:
    // off, an immediate stop loses commits the client was already told about.
    '-c fsync=off',
  ].join(' ');

  const start = async () => {
    await postgresTool('pg_ctl', '-D', data, '-l', log, '-o', serverOptions, '-w', 'start').catch(
      async (error: Error) => {
        const serverLog = await readFile(log, 'utf8').catch(() => '');
        throw new Error(`PostgreSQL did not start: ${error.message}\n${serverLog}`);
      },
    );
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await postgresTool('pg_ctl', '-D', data, '-m', mode, '-w', 'stop');
  };
  const destroy = async () => {
    await stop('immediate').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await postgresTool('initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync');
    await start();
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'postgres',
    });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    await admin.end();
  } catch (error) {
    await destroy();
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
    port,
    stop,
    start,
    destroy,
  };
}

/** Debian installs each major version under /usr/lib/postgresql/<major>/bin; CI may have any. */
async function newestPostgresBin(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const majors = (await readdir(root).catch(() => [] as string[]))
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (majors.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return join(root, majors[0], 'bin');
}

/** Hands the directory to the postgres OS user; returns the prefix that runs a command as it. */
async function ownedByPostgres(dir: string): Promise<string[]> {
  const uid = Number((await execFileAsync('id', ['-u', 'postgres'])).stdout);
  const gid = Number((await execFileAsync('id', ['-g', 'postgres'])).stdout);
  await chown(dir, uid, gid);
  return ['runuser', '-u', 'postgres', '--'];
}
