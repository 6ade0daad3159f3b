import { execFile, spawn, type ChildProcess } from 'node:child_process';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `apikey` CLI against a database, as `npm run apikey` does. */
export function runApiKeyCli(args: string[], databaseUrl: string): Promise<Finished> {
  return new Promise((resolve) => {
    execFile('node', ['dist/auth/apikey.cli.js', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl } }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything written to stdout so far (JSON log lines). */
  output(): string;
  exited: Promise<number | null>;
}

/** Starts `node dist/server.mjs` (the bundle `npm start` runs) on a free port and waits until it listens. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn('node', ['dist/server.mjs'], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout}`)), 15_000);
    const poll = setInterval(() => {
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (listening) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(listening[1]);
      }
    }, 20);
    void exited.then(() => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`server exited:\n${stdout}`));
    });
  });
  return { child, baseUrl, output: () => stdout, exited };
}
