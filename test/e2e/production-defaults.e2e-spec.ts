import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApiKeyCliIn, startServerIn, type ServerProcess } from '../support/processes.js';

const Database = betterSqlite3();

/**
 * A directory standing in for a clean clone: the committed `.env` and nothing else. The server
 * and the CLI run there, so `.env` and its relative sqlite path (data/animal-store.sqlite) are
 * read as they would be after `git clone`.
 */
async function cleanClone(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-clone-'));
  await copyFile('.env', join(dir, '.env'));
  return dir;
}

/** The log lines of a start, up to "Server listening", without their timestamps. */
function startLines(server: ServerProcess): Record<string, unknown>[] {
  const output = server.output();
  return output
    .slice(0, output.lastIndexOf('\n', output.indexOf('Server listening')) + 1)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return rest;
    });
}

const warnings = (server: ServerProcess) =>
  startLines(server).filter((line) => line.level === 'warn' || line.level === 'error');

const NO_KEY_YET = {
  level: 'warn',
  context: 'ApiKeys',
  msg: 'No API key exists: every request will get 401 until one is created (npm run apikey -- create <name>)',
};

const SCHEME_REFUSED = 'url must be an https URL';
const ADDRESS_REFUSED = 'url must not point to a loopback, private or otherwise non-public address';

describe('a production start from a clean clone, with nothing set but NODE_ENV=production', () => {
  let dir: string;
  let server: ServerProcess;
  let key: string;
  /** A real receiver on loopback: what a webhook aimed at this machine would reach. */
  let receiver: Server;
  let receiverPort: number;
  let received = 0;

  beforeAll(async () => {
    dir = await cleanClone();
    receiver = createServer((_request, response) => {
      received += 1;
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverPort = (receiver.address() as AddressInfo).port;
    // PORT=0 (set by startServerIn): the .env's 3000 may be taken on a shared machine.
    server = await startServerIn(dir, { NODE_ENV: 'production' });
    const created = await runApiKeyCliIn(
      dir,
      ['create', 'webhooks-admin', '--scopes', 'webhooks:manage'],
      { NODE_ENV: 'production' },
    );
    expect(created.code).toBe(0);
    key = created.stdout.trim();
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await new Promise((resolve) => receiver?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const storedWebhooks = () => {
    const database = new Database(join(dir, 'data/animal-store.sqlite'), { readonly: true });
    try {
      return database.prepare('SELECT url FROM webhook_subscriptions').all();
    } finally {
      database.close();
    }
  };

  it.each([
    ['a loopback receiver', (port: number) => `http://127.0.0.1:${port}/hook`, SCHEME_REFUSED],
    [
      'the link-local cloud metadata address',
      () => 'http://169.254.169.254/latest/meta-data/',
      SCHEME_REFUSED,
    ],
    [
      'a loopback receiver over https',
      (port: number) => `https://127.0.0.1:${port}/hook`,
      ADDRESS_REFUSED,
    ],
    [
      'the link-local cloud metadata address over https',
      () => 'https://169.254.169.254/latest/meta-data/',
      ADDRESS_REFUSED,
    ],
  ])('refuses a webhook aimed at %s with 400, storing nothing', async (_case, url, message) => {
    const response = await fetch(`${server.baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: url(receiverPort) }),
    });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ code: 'VALIDATION_FAILED', message, status: 400 });
    expect(storedWebhooks()).toEqual([]);
    const listed = await fetch(`${server.baseUrl}/v1/webhooks`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await listed.json()).toEqual([]);
    expect(received).toBe(0);
  });

  it('logs no relaxed guard at start', () => {
    expect(warnings(server)).toEqual([NO_KEY_YET]);
  });
});

describe('a start with a guard relaxed by configuration', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];

  /** Starts the build from a clean clone with `env`, and stops it again. */
  async function startLog(env: Record<string, string>): Promise<Record<string, unknown>[]> {
    const dir = await cleanClone();
    dirs.push(dir);
    const server = await startServerIn(dir, env);
    servers.push(server);
    server.child.kill('SIGTERM');
    await server.exited;
    return warnings(server);
  }

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGKILL');
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('in production logs an error line naming WEBHOOK_ALLOW_PRIVATE_TARGETS', async () => {
    const logged = await startLog({
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });

    expect(logged).toEqual([
      {
        level: 'error',
        variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
        value: 'true',
        msg: 'Guard relaxed in production by WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks may be sent over plain http to loopback, private and link-local addresses, the cloud metadata service included',
      },
      NO_KEY_YET,
    ]);
  });

  it('in production logs one error line per relaxed guard, each naming its variable', async () => {
    const logged = await startLog({
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      TRUSTED_PROXIES: '10.0.0.0/8,::/0',
    });

    expect(logged.map(({ level, variable, value }) => ({ level, variable, value }))).toEqual([
      { level: 'error', variable: 'RATE_LIMIT_PER_MINUTE', value: '0' },
      { level: 'error', variable: 'AUTH_FAILURE_LIMIT_PER_MINUTE', value: '0' },
      { level: 'error', variable: 'TRUSTED_PROXIES', value: '10.0.0.0/8,::/0' },
      { level: 'error', variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS', value: 'true' },
      { level: 'warn', variable: undefined, value: undefined },
    ]);
  });

  it('outside production logs a warning line', async () => {
    const logged = await startLog({
      NODE_ENV: 'development',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });

    expect(logged[0]).toEqual({
      level: 'warn',
      variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      value: 'true',
      msg: 'Guard relaxed by WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks may be sent over plain http to loopback, private and link-local addresses, the cloud metadata service included',
    });
    expect(logged.slice(1).map((line) => line.variable)).toEqual([undefined]);
  });
});
