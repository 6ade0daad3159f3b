import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import { execFile, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { readdir, readFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import {
  startDevServer,
  waitFor,
  type DevServer,
  type ServerProcess,
} from '../support/processes.js';

const Database = betterSqlite3();

describe('the server process (node dist/main.js, as npm start runs it)', () => {
  let dev: DevServer;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    dev = await startDevServer();
    ({ server, key } = dev);
  });
  afterAll(() => dev?.stop());

  it('prints a local key on first start, which works over real HTTP', async () => {
    const response = await fetch(`${server.baseUrl}/v1/pets`, {
      headers: { authorization: `Bearer ${key}` },
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('serves the committed OpenAPI document and the docs page from the build', async () => {
    const committed = JSON.parse(await readFile('openapi.json', 'utf8'));
    const served = (await (await fetch(`${server.baseUrl}/docs-json`)).json()) as Record<
      string,
      unknown
    >;
    expect({ ...served, servers: committed.servers }).toEqual(committed);
    const page = await fetch(`${server.baseUrl}/docs/swagger-ui.css`);
    expect(page.status).toBe(200);
  });

  it('is not rebuilt by npm start when nothing the build read has changed', async () => {
    const built = (await stat('dist/main.js')).mtimeMs;
    const check = await new Promise<number | null>((resolve) =>
      execFile('node', ['scripts/build.mjs', '--if-stale'], (error) =>
        resolve(error ? (error.code as number) : 0),
      ),
    );
    expect(check).toBe(0);
    expect((await stat('dist/main.js')).mtimeMs).toBe(built);
  });

  it('is built without a character beyond Latin-1, so V8 holds its source at one byte a character', async () => {
    const files = (await readdir('dist')).filter((name) => name.endsWith('.js'));
    const twoByte: string[] = [];
    for (const name of files) {
      if (/[\u0100-\uffff]/.test(await readFile(`dist/${name}`, 'utf8'))) twoByte.push(name);
    }
    expect(files.length).toBeGreaterThan(3);
    expect(twoByte).toEqual([]);
  });

  it('logs one JSON line per request with its request id, never the key', async () => {
    await fetch(`${server.baseUrl}/v1/pets?limit=5`, {
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'trace-me-1' },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));

    const lines = server
      .output()
      .trim()
      .split('\n')
      .filter((line) => line.includes('trace-me-1'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'info',
      requestId: 'trace-me-1',
      method: 'GET',
      route: '/v1/pets',
      status: 200,
      durationMs: expect.any(Number),
      msg: 'request',
    });
    const afterStart = server.output().slice(server.output().indexOf('Server listening'));
    expect(afterStart).not.toContain(key);
    expect(afterStart.toLowerCase()).not.toContain('authorization');
  });

  it.each([
    [
      'a malformed header line',
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n',
      'Malformed HTTP request',
    ],
    [
      'headers over the size limit',
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'Request headers are too large',
    ],
  ])('answers %s with the Error body, and keeps serving', async (_case, raw, message) => {
    const answer = await rawHttp(server.baseUrl, raw);

    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(answer.toLowerCase()).toContain('cache-control: no-store');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      code: 'VALIDATION_FAILED',
      message,
      status: 400,
    });
    expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200);
  });

  it('logs a line for a request whose URL cannot be routed', async () => {
    await fetch(`${server.baseUrl}/v1/pets/%E0%A4%A`, {
      headers: { 'x-request-id': 'trace-bad-url' },
    });
    await waitFor(() => server.output().includes('trace-bad-url'));
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('trace-bad-url'))!;
    expect(JSON.parse(line)).toMatchObject({
      requestId: 'trace-bad-url',
      method: 'GET',
      status: 400,
      msg: 'request',
    });
  });

  it('on SIGTERM refuses new connections, finishes the request in flight, then exits 0', async () => {
    const body = JSON.stringify({ name: 'in flight at SIGTERM', categoryId: 1 });
    const inFlight = request(`${server.baseUrl}/v1/pets`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': body.length,
      },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      inFlight.on('response', (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      inFlight.on('error', reject);
    });
    // Half the body now, so the request is mid-flight when the signal arrives.
    inFlight.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.child.kill('SIGTERM');
    await waitFor(() => server.output().includes('shutting down'));

    await expect(fetch(`${server.baseUrl}/health/live`)).rejects.toThrow();
    inFlight.end(body.slice(10));
    const finished = await response;

    expect(finished.status).toBe(201);
    expect(JSON.parse(finished.body)).toMatchObject({
      name: 'in flight at SIGTERM',
      categoryId: 1,
    });
    // The client's keep-alive connection must not hold the shutdown open: the exit comes within
    // the 2 s a stop is documented to take, which a loaded 2-core VM stretched past 1 s.
    const responseAt = Date.now();
    expect(await server.exited).toBe(0);
    expect(Date.now() - responseAt).toBeLessThan(2_000);
    expect(server.output()).toContain('"msg":"stopped"');
    const stored = new Database(dev.databasePath, { readonly: true })
      .prepare('SELECT name FROM pets')
      .all();
    expect(stored).toEqual([{ name: 'in flight at SIGTERM' }]);
  });
});

describe('configuration at start', () => {
  it.each([
    ['PORT', 'abc', 'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")'],
    [
      'DATABASE_URL',
      'mysql://x',
      'Invalid configuration: DATABASE_URL must be sqlite:<path> or postgres://user@host:port/database (got "mysql://x")',
    ],
    [
      'LOG_LEVEL',
      'loud',
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
  ])('refuses a bad %s with one line naming it, exit 1', async (name, value, message) => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) =>
        execFile(
          'node',
          ['dist/main.js'],
          { env: { ...process.env, [name]: value } },
          (error, stdout, stderr) =>
            resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
        ),
    );
    expect(result).toEqual({ code: 1, stdout: '', stderr: `${message}\n` });
  });
});

describe('a stop signal before the server listens', () => {
  it('ends the process at once, exit 0, while the database is still being waited for', async () => {
    // Nothing listens there: the start waits for PostgreSQL, retrying every 3 seconds.
    const databaseUrl = `postgres://postgres@127.0.0.1:${await freePort()}/animal_store`;
    const child = spawn('node', ['dist/main.js'], {
      env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', DATABASE_URL: databaseUrl },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    await waitFor(() => stdout.includes('Unable to connect to the database'), 15_000);

    const signalledAt = Date.now();
    child.kill('SIGTERM');

    expect(await exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(2_000);
    expect(stderr).toBe('SIGTERM before the server listened: exiting\n');
  });
});

/** Sends bytes as they are and returns everything the server answers before closing. */
function rawHttp(baseUrl: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
