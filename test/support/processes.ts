import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { serverNodeArgs } from '../../scripts/start-command.mjs';
import { WEBHOOK_RECEIVER_COMMAND } from './example-commands.js';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `apikey` CLI against a database, as `npm run apikey` does. */
export function runApiKeyCli(args: string[], databaseUrl: string): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['dist/api-key.cli.js', ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

/**
 * Runs the built `apikey` CLI from `cwd` (whose `.env` it reads) with no environment but PATH and
 * `env`, as on a machine where nothing else is set.
 */
export function runApiKeyCliIn(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      'node',
      [resolvePath('dist/api-key.cli.js'), ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything written to stdout and stderr so far, in arrival order (JSON log lines). */
  output(): string;
  /** What was written to stdout alone. */
  stdout(): string;
  exited: Promise<number | null>;
}

const SERVER_LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;

/** Starts `node dist/main.js` (the build `npm start` runs) on a free port and waits until it listens. */
export function startServer(env: Record<string, string>): Promise<ServerProcess> {
  return startListening(['dist/main.js'], env, SERVER_LISTENING);
}

/**
 * Starts the build with the node arguments of `npm start`, from `cwd` (whose `.env` it reads), with
 * no environment but PATH, a free PORT and `env`: a start on a clean clone, where the shell that
 * runs the tests lends nothing.
 */
export function startServerIn(cwd: string, env: Record<string, string>): Promise<ServerProcess> {
  const args = serverNodeArgs();
  return startListening(
    [...args.slice(0, -1), resolvePath(args.at(-1))],
    { PATH: process.env.PATH ?? '', ...env },
    SERVER_LISTENING,
    { cwd, inheritEnv: false },
  );
}

export interface DevServer {
  server: ServerProcess;
  /** The `local` key the server printed on its first start. */
  key: string;
  /** The SQLite file it serves. */
  databasePath: string;
  stop(): Promise<void>;
}

/** The built server in development mode on a fresh SQLite file, with the key it creates on first start. */
export async function startDevServer(env: Record<string, string> = {}): Promise<DevServer> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-dev-'));
  const databasePath = join(dir, 'db.sqlite');
  const server = await startServer({
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DATABASE_URL: `sqlite:${databasePath}`,
    ...env,
  });
  const key = /It is shown only now: (pets_\S+)"/.exec(server.output())![1];
  return {
    server,
    key,
    databasePath,
    stop: async () => {
      server.child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the benchmark's reference implementation on a free port and waits for its ready line. */
export function startReference(env: Record<string, string>): Promise<ServerProcess> {
  return startListening(
    ['bench/reference/server.mjs'],
    env,
    /^reference listening on (http:\/\/127\.0\.0\.1:\d+)$/m,
  );
}

/**
 * Starts the webhook receiver example (examples/webhook-receiver/) on a free loopback port and
 * waits for its ready line; `baseUrl` is the URL to deliver to.
 */
export function startWebhookReceiver(env: Record<string, string>): Promise<ServerProcess> {
  return startListening(
    WEBHOOK_RECEIVER_COMMAND,
    { HOST: '127.0.0.1', ...env },
    /^webhook receiver listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks\/animal-store)$/m,
  );
}

/**
 * Spawns `node <args>` with PORT=0 and resolves once its output shows the URL it listens on. The
 * child inherits this process's environment unless `inheritEnv` is false.
 */
async function startListening(
  args: string[],
  env: Record<string, string>,
  listeningAt: RegExp,
  { cwd, inheritEnv = true }: { cwd?: string; inheritEnv?: boolean } = {},
): Promise<ServerProcess> {
  const script = args.find((arg) => !arg.startsWith('-'));
  const child = spawn('node', args, {
    cwd,
    env: { ...(inheritEnv ? process.env : {}), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let all = '';
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    all += chunk;
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => (all += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // no orphan server left behind a failed start
      reject(new Error(`${script} did not start:\n${all}`));
    }, 15_000);
    const poll = setInterval(() => {
      const listening = listeningAt.exec(all);
      if (listening) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(listening[1]);
      }
    }, 20);
    void exited.then(() => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`${script} exited:\n${all}`));
    });
  });
  return { child, baseUrl, output: () => all, stdout: () => stdout, exited };
}

/**
 * Polls until the condition holds; fails after the timeout. An asynchronous condition (a query) is
 * asked once at a time, and none is left running once this returns or throws.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
