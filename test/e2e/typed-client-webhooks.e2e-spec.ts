import { execFile } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AnimalStoreError,
  createAnimalStoreClient,
  type AnimalStoreClient,
} from '../../examples/client/src/example.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
} from '../../examples/client/src/webhooks.js';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { CLIENT_COMMAND } from '../support/example-commands.js';
import type { Finished } from '../support/processes.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const URL = 'https://marketplace.example/hooks/animal-store';

/** The state of a webhook that has been sent nothing yet. */
const UNTOUCHED = {
  disabled: false,
  lastSuccessAt: null,
  lastFailureAt: null,
  lastFailureReason: null,
  pendingDeliveries: 0,
  givenUpDeliveries: 0,
};

/** The rejection of `promise`, which must reject with an AnimalStoreError. */
async function refusal(promise: Promise<unknown>): Promise<AnimalStoreError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AnimalStoreError);
  return error as AnimalStoreError;
}

describe.each(ENGINES)('typed client managing webhooks [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;
  let managerKey: string;
  let client: AnimalStoreClient;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `${await t.app.getUrl()}/v1`;
    managerKey = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] }))
      .key;
    client = createAnimalStoreClient(baseUrl, managerKey);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM webhook_deliveries');
    await t.dataSource.query('DELETE FROM webhook_subscriptions');
  });

  it('creates, lists, reads, rotates the secret of and deletes a webhook', async () => {
    const created = await createWebhook(client, { url: URL, events: ['pet.updated'] });
    const everything = await createWebhook(client, { url: `${URL}/all` });
    const listed = await listWebhooks(client);
    const read = await getWebhook(client, created.id);
    const rotated = await rotateWebhookSecret(client, created.id);
    await deleteWebhook(client, created.id);
    const afterDelete = await listWebhooks(client);

    expect(created).toEqual({
      id: expect.any(Number),
      url: URL,
      events: ['pet.updated'],
      createdAt: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(SECRET),
    });
    expect(everything).toMatchObject({ url: `${URL}/all`, events: null });
    const { secret: _created, ...shown } = created;
    const { secret: _everything, ...shownEverything } = everything;
    expect(listed).toEqual([
      { ...shown, ...UNTOUCHED },
      { ...shownEverything, ...UNTOUCHED },
    ]);
    expect(read).toEqual({ ...shown, ...UNTOUCHED });
    expect(rotated).toEqual({ ...shown, secret: expect.stringMatching(SECRET) });
    expect(rotated.secret).not.toBe(created.secret);
    expect(afterDelete).toEqual([{ ...shownEverything, ...UNTOUCHED }]);
    const gone = await refusal(getWebhook(client, created.id));
    expect(gone.body).toEqual({
      code: 'NOT_FOUND',
      message: `No webhook with id ${created.id}`,
      status: 404,
    });
  });

  it("surfaces the API's Error bodies: 400 for a refused URL, 404 for a deleted webhook, 403 without the scope", async () => {
    const invalid = await refusal(createWebhook(client, { url: 'ftp://marketplace.example/' }));
    const missing = await refusal(deleteWebhook(client, 999_999));
    const rotatedMissing = await refusal(rotateWebhookSecret(client, 999_999));
    const forbidden = await refusal(listWebhooks(createAnimalStoreClient(baseUrl, t.key)));

    expect(invalid.body).toEqual({
      code: 'VALIDATION_FAILED',
      message:
        'url must be an absolute http or https URL of at most 2048 characters, without credentials or fragment',
      status: 400,
    });
    expect(invalid.message).toBe(`createWebhook: 400 VALIDATION_FAILED: ${invalid.body.message}`);
    expect(missing.body).toEqual({
      code: 'NOT_FOUND',
      message: 'No webhook with id 999999',
      status: 404,
    });
    expect(missing.message).toBe('deleteWebhook: 404 NOT_FOUND: No webhook with id 999999');
    expect(rotatedMissing.message).toBe(
      'rotateWebhookSecret: 404 NOT_FOUND: No webhook with id 999999',
    );
    expect(forbidden.body).toEqual({
      code: 'FORBIDDEN',
      message: 'This API key lacks the scope webhooks:manage',
      status: 403,
    });
    expect(await listWebhooks(client)).toEqual([]);
  });

  it('runs as a command: webhooks create, list, get, rotate-secret and delete', async () => {
    const env = { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: managerKey };

    const created = await run(['webhooks', 'create', URL, 'pet.created', 'pet.updated'], env);
    const id = /^created #(\d+) /.exec(created.stdout)?.[1] ?? 'none';
    const secret = /^secret (\S+) /m.exec(created.stdout)?.[1] ?? 'none';
    const listed = await run(['webhooks', 'list'], env);
    const got = await run(['webhooks', 'get', id], env);
    const rotated = await run(['webhooks', 'rotate-secret', id], env);
    const deleted = await run(['webhooks', 'delete', id], env);
    const deletedAgain = await run(['webhooks', 'delete', id], env);

    expect(created).toEqual({
      code: 0,
      stdout:
        `created #${id} ${URL} [pet.created, pet.updated]\n` +
        `secret ${secret} (shown only now: give it to the receiver)\n`,
      stderr: '',
    });
    expect(secret).toMatch(SECRET);
    const line = `#${id} ${URL} [pet.created, pet.updated] active, 0 pending, 0 given up\n`;
    expect(listed).toEqual({ code: 0, stdout: line, stderr: '' });
    expect(got).toEqual({ code: 0, stdout: line, stderr: '' });
    expect(rotated).toMatchObject({ code: 0, stderr: '' });
    expect(rotated.stdout).toMatch(
      /^secret whsec_\S+ \(shown only now; the previous one also signs for 24 hours\)\n$/,
    );
    expect(rotated.stdout).not.toContain(secret);
    expect(deleted).toEqual({ code: 0, stdout: `deleted #${id}\n`, stderr: '' });
    expect(deletedAgain).toEqual({
      code: 1,
      stdout: '',
      stderr: `The request failed with 404 NOT_FOUND: No webhook with id ${id}\n`,
    });
    expect(await listWebhooks(client)).toEqual([]);
  });

  it('exits 2 with the usage for a webhook command it does not know', async () => {
    const env = { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: managerKey };

    const results = await Promise.all(
      [
        ['webhooks'],
        ['webhooks', 'get', '1e3'],
        ['webhooks', 'delete'],
        ['webhooks', 'list', 'extra'],
        ['webhooks', 'rename', '1'],
      ].map((args) => run(args, env)),
    );

    for (const result of results) {
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: [
          'Usage: npm run client:example',
          'Usage: npm run client:example -- catalogue',
          'Usage: npm run client:example -- follow <cursor-file>',
          'Usage: npm run client:example -- till <petId>',
          'Usage: npm run client:example -- webhooks list',
          'Usage: npm run client:example -- webhooks get <id>',
          'Usage: npm run client:example -- webhooks create <url> [event-type…]',
          'Usage: npm run client:example -- webhooks rotate-secret <id>',
          'Usage: npm run client:example -- webhooks delete <id>',
          '',
        ].join('\n'),
      });
    }
  });
});

/** Runs the example's command to completion; `code` is its exit status. */
function run(args: string[], env: Record<string, string>): Promise<Finished> {
  return new Promise((done) => {
    execFile(
      'node',
      [...CLIENT_COMMAND, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => done({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}
