import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApiKeyCli } from '../support/processes.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

const KEY = /^pets_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

describe.each(ENGINES)('apikey CLI [%s]', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t?.close());

  it('create prints the new key alone on stdout, and the key works at once', async () => {
    const created = await runApiKeyCli(['create', 'mobile app'], t.databaseUrl);

    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^pets_\S+\n$/);
    const key = created.stdout.trim();
    expect(key).toMatch(KEY);
    expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);
  });

  it('list prints id, name, prefix, scopes, created, expires, last use, revoked and state, never a secret', async () => {
    const key = (await runApiKeyCli(['create', 'listed'], t.databaseUrl)).stdout.trim();
    const prefix = key.split('_')[1];

    const listed = await runApiKeyCli(['list'], t.databaseUrl);

    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header.split(/\s+/)).toEqual([
      'id',
      'name',
      'prefix',
      'scopes',
      'created',
      'expires',
      'last-used',
      'last-deprecated-call',
      'revoked',
      'state',
    ]);
    const row = rows.find((line) => line.includes(prefix))!;
    expect(row).toMatch(
      new RegExp(
        `^\\d+\\s+listed\\s+${prefix}\\s+pets:read,pets:write,orders:write\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+never\\s+-\\s+-\\s+-\\s+active$`,
      ),
    );
    expect(listed.stdout).not.toContain(key.slice(-43));
  });

  it('list shows when a key last called the deprecated getPet, and only for that key', async () => {
    const caller = (await runApiKeyCli(['create', 'old-client'], t.databaseUrl)).stdout.trim();
    const other = (await runApiKeyCli(['create', 'new-client'], t.databaseUrl)).stdout.trim();
    const calledAt = Date.now();
    expect((await t.request('GET', '/v1/pets/999999', { key: caller })).statusCode).toBe(404);
    expect((await t.request('GET', '/v1/pets', { key: other })).statusCode).toBe(200);

    // The note is written beside the request, not before its answer.
    let rows: string[] = [];
    for (let tries = 0; tries < 50; tries++) {
      rows = (await runApiKeyCli(['list'], t.databaseUrl)).stdout.split('\n');
      if (rows.some((row) => /old-client(\s+\S+){5}\s+\d{4}-/.test(row))) break;
    }
    const columns = (name: string) => rows.find((row) => row.includes(` ${name} `))!.split(/\s+/);
    const [, , , , , , , lastDeprecatedCall] = columns('old-client');
    expect(Date.parse(lastDeprecatedCall)).toBeGreaterThanOrEqual(
      Math.floor(calledAt / 1000) * 1000 - 1000,
    );
    expect(columns('new-client')[7]).toBe('-');
  });

  it('revoke makes the key fail with 401 within 5 seconds; other keys keep working', async () => {
    const key = (await runApiKeyCli(['create', 'to-revoke'], t.databaseUrl)).stdout.trim();
    expect((await t.request('GET', '/v1/pets', { key })).statusCode).toBe(200);
    const id = /^(\d+)\s+to-revoke/m.exec((await runApiKeyCli(['list'], t.databaseUrl)).stdout)![1];

    const revoked = await runApiKeyCli(['revoke', id], t.databaseUrl);
    const revokedAt = Date.now();

    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked key ${id} \\(to-revoke\\) at \\S+Z\\n$`));
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 5_000) {
      status = (await t.request('GET', '/v1/pets', { key })).statusCode;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect((await t.request('GET', '/v1/pets')).statusCode).toBe(200);
    expect((await runApiKeyCli(['list'], t.databaseUrl)).stdout).toMatch(
      new RegExp(
        `^${id}\\s+to-revoke\\s+\\S+\\s+\\S+\\s+\\S+Z\\s+never\\s+\\S+Z\\s+-\\s+\\S+Z\\s+revoked$`,
        'm',
      ),
    );
  });

  it('create --scopes and --expires-in, in either order, make a key with those scopes and expiry', async () => {
    const created = await runApiKeyCli(
      ['create', 'partner', '--expires-in', '30d', '--scopes', 'orders:write,pets:read'],
      t.databaseUrl,
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const prefix = created.stdout.trim().split('_')[1];
    const row = new RegExp(
      `^\\d+\\s+partner\\s+${prefix}\\s+pets:read,orders:write\\s+\\S+Z\\s+(\\S+Z)\\s+-\\s+-\\s+-\\s+active$`,
      'm',
    ).exec((await runApiKeyCli(['list'], t.databaseUrl)).stdout);
    expect(Math.abs(Date.parse(row![1]) - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
  });

  it.each([
    [['create', 'x', '--scopes', 'pets:admin'], 'create: --scopes: unknown scope "pets:admin"'],
    [['create', 'x', '--scopes', ''], 'create: --scopes: unknown scope ""'],
    [
      ['create', 'x', '--scopes', 'pets:read,pets:read'],
      'create: --scopes: scope pets:read is listed twice',
    ],
    [
      ['create', 'x', '--expires-in', '0d'],
      'create: --expires-in must be whole days from 1d to 3650d',
    ],
    [
      ['create', 'x', '--expires-in', '30'],
      'create: --expires-in must be whole days from 1d to 3650d',
    ],
    [
      ['create', 'x', '--expires-in', '3651d'],
      'create: --expires-in must be whole days from 1d to 3650d',
    ],
    [
      ['create', 'x', '--expires-in', '1d', '--expires-in', '2d'],
      'create: unexpected "--expires-in"',
    ],
    [['create', 'x', '--scopes'], 'create: --scopes needs a value'],
    [['create', 'x', '--name', 'y'], 'create: unexpected "--name"'],
    [['create', '--scopes', 'pets:read'], 'usage:'],
  ])('exits 2 and creates nothing for %j', async (args, message) => {
    const storedKeys = () => t.dataSource.query('SELECT * FROM api_keys ORDER BY id');
    const before = await storedKeys();
    const result = await runApiKeyCli(args, t.databaseUrl);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.startsWith(message)).toBe(true);
    expect(await storedKeys()).toEqual(before);
  });

  it.each([
    [[]],
    [['create']],
    [['revoke']],
    [['delete', '1']],
    [['list', 'extra']],
    [['revoke', 'abc']],
    [['revoke', '1', '--scopes', 'pets:read']],
  ])('exits 2 with usage on stderr for %j', async (args) => {
    const result = await runApiKeyCli(args, t.databaseUrl);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toBe('');
  });

  it('exits 1 when revoking an id that does not exist', async () => {
    const result = await runApiKeyCli(['revoke', '999999'], t.databaseUrl);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'revoke: no key with id 999999\n' });
  });
});

describe('npm run --silent apikey', () => {
  it('prints the key alone, as the README documents', async () => {
    const t = await startTestApp('sqlite');
    try {
      const { stdout } = await promisify(execFile)(
        'npm',
        ['run', '--silent', 'apikey', '--', 'create', 'via-npm'],
        { env: { ...process.env, DATABASE_URL: t.databaseUrl } },
      );
      expect(stdout).toMatch(/^pets_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n$/);
    } finally {
      await t.close();
    }
  });
});
