import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPENAPI_DOCUMENT,
  renderSchemaTypes,
  SCHEMA_TYPES_FILE,
} from '../../examples/client/scripts/generate-types.mjs';
import {
  AnimalStoreError,
  createAnimalStoreClient,
  EXAMPLE_PET,
  explainError,
  getPet,
  readPage,
  runExample,
  type NewPet,
  type Pet,
} from '../../examples/client/src/example.js';
import { findLink } from '../../examples/client/src/link-header.js';
import { CLIENT_COMMAND } from '../support/example-commands.js';
import {
  runApiKeyCli,
  startServer,
  type Finished,
  type ServerProcess,
} from '../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';

const EXAMPLE_DIR = resolve('examples/client');
const TSC = resolve('node_modules/.bin/tsc');

/** Runs a command to completion; `code` is its exit status. */
function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Finished> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => done({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe('typed client example', () => {
  it('has committed types equal to what openapi-typescript generates from openapi.json now', async () => {
    expect(
      await readFile(SCHEMA_TYPES_FILE, 'utf8'),
      'regenerate: node examples/client/scripts/generate-types.mjs',
    ).toBe(await renderSchemaTypes());
  });

  it('type-checks: tsc -p examples/client/tsconfig.json exits 0', async () => {
    const checked = await run(TSC, ['-p', join(EXAMPLE_DIR, 'tsconfig.json'), '--pretty', 'false']);

    expect(checked).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

type OpenApiDocument = Record<string, any>;

/** Schema changes that break what the example relies on; each must fail its type-check. */
const BREAKING_CHANGES: {
  dir: string;
  change: string;
  /** What tsc reports. */
  error: string | RegExp;
  edit(doc: OpenApiDocument): void;
}[] = [
  {
    dir: 'pet-id-string',
    change: 'Pet.id becomes a string',
    error:
      "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'",
    edit: (doc) => {
      doc.components.schemas.Pet.properties.id = { type: 'string' };
    },
  },
  {
    dir: 'pet-name-optional',
    change: 'Pet.name becomes optional',
    error:
      "error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'",
    edit: (doc) => {
      doc.components.schemas.Pet.required = ['id', 'categoryId'];
    },
  },
  {
    dir: 'pet-category-renamed',
    change: 'Pet.categoryId is renamed category',
    error: "error TS2339: Property 'categoryId' does not exist",
    edit: ({ components: { schemas } }) => {
      schemas.Pet.properties.category = schemas.Pet.properties.categoryId;
      delete schemas.Pet.properties.categoryId;
      schemas.Pet.required = ['id', 'name', 'category'];
    },
  },
  {
    dir: 'pet-status-added',
    change: 'PetStatus gains "reserved"',
    error: "error TS2741: Property 'reserved' is missing",
    edit: (doc) => {
      doc.components.schemas.PetStatus.enum.push('reserved');
    },
  },
  {
    dir: 'list-not-array',
    change: 'listPets answers one Pet instead of an array',
    error:
      /error TS2740: Type '\{[^']*\}' is missing the following properties from type '\{[^']*\}\[\]'/,
    edit: (doc) => {
      const ok = doc.paths['/pets'].get.responses['200'];
      ok.content['application/json'].schema = { $ref: '#/components/schemas/Pet' };
    },
  },
  {
    dir: 'error-code-dropped',
    change: 'ErrorCode loses UNAUTHORIZED',
    error: `error TS2678: Type '"UNAUTHORIZED"' is not comparable`,
    edit: ({ components: { schemas } }) => {
      schemas.ErrorCode.enum = schemas.ErrorCode.enum.filter(
        (code: string) => code !== 'UNAUTHORIZED',
      );
    },
  },
  {
    dir: 'webhook-id-string',
    change: "getWebhook's id becomes a string",
    error: "error TS2322: Type 'number' is not assignable to type 'string'",
    edit: (doc) => {
      doc.paths['/webhooks/{id}'].get.parameters[0].schema = { type: 'string' };
    },
  },
  {
    dir: 'webhook-secret-dropped',
    change: 'WebhookWithSecret loses its secret',
    error: "error TS2339: Property 'secret' does not exist",
    edit: ({ components: { schemas } }) => {
      delete schemas.WebhookWithSecret.properties.secret;
      schemas.WebhookWithSecret.required = ['id', 'url', 'events', 'createdAt'];
    },
  },
];

describe('typed client example: breaking schema changes', () => {
  let dir: string;
  let errorLines: string[];

  // One tsc run checks a copy of the example per change, each with types generated from the
  // edited document, plus an unedited copy that must stay clean.
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'animal-store-client-types-'));
    await symlink(resolve('node_modules'), join(dir, 'node_modules'));
    // The example's sources are ES modules, as under the repository's package.json.
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    const committed = JSON.parse(await readFile(OPENAPI_DOCUMENT, 'utf8')) as OpenApiDocument;
    const copies = [{ dir: 'unchanged', edit: () => {} }, ...BREAKING_CHANGES];
    for (const copy of copies) {
      const doc = structuredClone(committed);
      copy.edit(doc);
      const src = join(dir, copy.dir, 'src');
      await cp(join(EXAMPLE_DIR, 'src'), src, { recursive: true });
      await writeFile(join(src, 'api-schema.ts'), await renderSchemaTypes(doc as OpenAPI3));
    }
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(EXAMPLE_DIR, 'tsconfig.json'),
        compilerOptions: { rootDir: '.' },
        include: ['*/src/**/*.ts'],
      }),
    );
    const checked = await run(TSC, ['-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir });
    expect(checked.stderr).toBe('');
    errorLines = checked.stdout.split('\n').filter((line) => /\berror TS\d+:/.test(line));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const errorsIn = (copy: string) => errorLines.filter((line) => line.startsWith(`${copy}/`));

  it('reports nothing outside the edited copies: the setup and the unedited copy are clean', () => {
    const edited = BREAKING_CHANGES.map(({ dir: copy }) => `${copy}/`);
    expect(errorLines.filter((line) => !edited.some((prefix) => line.startsWith(prefix)))).toEqual(
      [],
    );
  });

  it.each(BREAKING_CHANGES)('fails the type-check when $change', ({ dir: copy, error }) => {
    expect(errorsIn(copy).join('\n')).toMatch(error);
  });
});

describe('typed client example: Link header parsing', () => {
  it.each([
    ['</v1/pets?limit=20&cursor=YWZ0ZXI6MjA>; rel="next"', '/v1/pets?limit=20&cursor=YWZ0ZXI6MjA'],
    ['</a>; rel=next', '/a'],
    ['</a>; REL="Next"', '/a'],
    ['</first>; rel="first", </b>; rel="prev next"', '/b'],
    ['</a>; title="x, y; rel=next"; rel="prev", </b>;rel="next"', '/b'],
    ['</a>; rel="prev"; rel="next"', undefined],
    ['</v1/pets>; rel="successor-version"', undefined],
    [null, undefined],
  ])('finds rel="next" in %j', (header, target) => {
    expect(findLink(header, 'next')).toBe(target);
  });
});

const SEEDED_PETS = 45;
const PAGE_SIZE = 10;
const STATUSES = ['available', 'pending', 'sold'] as const;

/** Pet i of the seed: three categories, each status, and every fourth without a status. */
function seedPet(i: number): NewPet {
  return {
    name: `seed ${i}`,
    categoryId: 1 + (i % 3),
    ...(i % 4 !== 0 && { status: STATUSES[i % 3] }),
  };
}

describe.each(ENGINES)('typed client example against the server [%s]', (engine) => {
  let database: TestDatabase;
  let server: ServerProcess;
  let baseUrl: string;
  let key: string;
  const seeded: Pet[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    server = await startServer({
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      RATE_LIMIT_PER_MINUTE: '0',
    });
    baseUrl = `${server.baseUrl}/v1`;
    const created = await runApiKeyCli(['create', 'client'], database.url);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    key = created.stdout.trim();
    for (let i = 1; i <= SEEDED_PETS; i += 1) {
      const response = await fetch(`${baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(seedPet(i)),
      });
      expect(response.status).toBe(201);
      seeded.push((await response.json()) as Pet);
    }
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await database?.drop();
  });

  async function listedIds(): Promise<number[]> {
    const response = await fetch(`${baseUrl}/pets?limit=100`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return ((await response.json()) as Pet[]).map((pet) => pet.id);
  }

  it('creates a pet, walks every page by its next link seeing each pet once, reads the pet back, sells it once', async () => {
    const lines: string[] = [];

    const result = await runExample({
      baseUrl,
      apiKey: key,
      log: (line) => lines.push(line),
      pageSize: PAGE_SIZE,
    });

    const { created } = result;
    expect(created).toEqual({ id: expect.any(Number), ...EXAMPLE_PET });
    expect(result.pages.map((page) => page.length)).toEqual([10, 10, 10, 10, 6]);
    expect(result.pages.flat()).toEqual([...seeded, created]);
    expect(result.readBack).toEqual(created);
    expect(result.firstPageAgain).toEqual({
      page: { pets: seeded.slice(0, 10), etag: expect.stringMatching(/^W\/"[\w-]{27}"$/) },
      changed: false,
    });
    expect(result.sold).toEqual({
      pet: { ...created, status: 'sold' },
      etag: `"${created.id}-2"`,
    });
    expect(result.staleSale.body).toEqual({
      code: 'PRECONDITION_FAILED',
      message: `If-Match does not match the current ETag of pet ${created.id}: read the pet again, then retry`,
      status: 412,
    });
    expect(explainError(result.staleSale.body)).toBe(
      `Someone changed the pet since you read it (${result.staleSale.body.message}). Read it again and decide anew.`,
    );
    const first = seeded[0].id;
    expect(lines).toEqual([
      `created #${created.id} Biscuit (category 1, available)`,
      `listed 46 pets (ids ${first} to ${created.id}, 3 categories; ` +
        '13 available, 11 pending, 11 sold, 11 no status) on 5 page(s) of up to 10',
      `read back #${created.id} Biscuit (category 1, available)`,
      `the first page is unchanged: 304 Not Modified for ${result.firstPageAgain.page.etag}`,
      `sold #${created.id} Biscuit (category 1, sold) with If-Match: "${created.id}-1", now "${created.id}-2"`,
      `a second sale with "${created.id}-1" is refused: 412 PRECONDITION_FAILED`,
    ]);
    const stored = await getPet(createAnimalStoreClient(baseUrl, key), created.id);
    expect(stored.status).toBe('sold');
  });

  it('polls a page with its ETag: 304 keeps the held page until a pet is added, then the new page', async () => {
    const client = createAnimalStoreClient(baseUrl, key);
    const query = { limit: 100, status: 'sold' } as const;
    const first = await readPage(client, query);
    const statuses: number[] = [];
    const counting = createAnimalStoreClient(baseUrl, key);
    counting.use({ onResponse: ({ response }) => void statuses.push(response.status) });

    const unchanged = await readPage(counting, query, first.page);
    const added = await fetch(`${baseUrl}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Polled', categoryId: 2, status: 'sold' }),
    });
    const pet = (await added.json()) as Pet;
    const changed = await readPage(counting, query, unchanged.page);

    expect(first.changed).toBe(true);
    expect(first.page.pets.every((p) => p.status === 'sold')).toBe(true);
    expect(statuses).toEqual([304, 200]);
    expect(unchanged).toEqual({ page: first.page, changed: false });
    expect(changed.changed).toBe(true);
    expect(changed.page.pets).toEqual([...first.page.pets, pet]);
    expect(changed.page.etag).not.toBe(first.page.etag);
  });

  it('explains the documented 410 of getPet after its sunset by naming the replacement', async () => {
    const document = JSON.parse(await readFile(OPENAPI_DOCUMENT, 'utf8')) as OpenApiDocument;
    const gone =
      document.paths['/pets/{petId}'].get.responses['410'].content['application/json'].examples.GONE
        .value;

    expect(explainError(gone)).toBe(
      'This operation has been retired: This operation was removed on Thu, 05 Dec 2030 ' +
        '00:00:00 GMT; use listPets (GET /v1/pets) with the status filter instead',
    );
  });

  it('surfaces the 401 Error body when the key is refused, and creates nothing', async () => {
    const before = await listedIds();
    const lines: string[] = [];

    const failure = await runExample({
      baseUrl,
      apiKey: 'pets_000000000000_refused',
      log: (line) => lines.push(line),
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(AnimalStoreError);
    expect((failure as AnimalStoreError).body).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Invalid API key',
      status: 401,
    });
    expect((failure as AnimalStoreError).message).toBe(
      'createPet: 401 UNAUTHORIZED: Invalid API key',
    );
    expect(lines).toEqual([]);
    expect(await listedIds()).toEqual(before);
  });

  it('surfaces the 403 Error body when a read-only key adds a pet, and creates nothing', async () => {
    const readOnly = await runApiKeyCli(
      ['create', 'storefront', '--scopes', 'pets:read'],
      database.url,
    );
    const before = await listedIds();

    const failure = await runExample({
      baseUrl,
      apiKey: readOnly.stdout.trim(),
      log: () => {},
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(AnimalStoreError);
    expect((failure as AnimalStoreError).body).toEqual({
      code: 'FORBIDDEN',
      message: 'This API key lacks the scope pets:write',
      status: 403,
    });
    expect(explainError((failure as AnimalStoreError).body)).toBe(
      'The API key may not do this (This API key lacks the scope pets:write). Use a key with that ' +
        'scope: npm run --silent apikey -- create <name> --scopes pets:read,pets:write',
    );
    expect(await listedIds()).toEqual(before);
  });

  it('surfaces the 404 Error body of getPet for an id that does not exist', async () => {
    const failure = await getPet(createAnimalStoreClient(baseUrl, key), 999_999).catch(
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(AnimalStoreError);
    expect((failure as AnimalStoreError).body).toEqual({
      code: 'NOT_FOUND',
      message: 'No pet with id 999999',
      status: 404,
    });
  });

  it('runs as a command: prints the walk and exits 0; explains a refused key and exits 1', async () => {
    const pagesAfterOneMore = Math.ceil(((await listedIds()).length + 1) / 20);

    const succeeded = await run('node', CLIENT_COMMAND, {
      env: { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: key },
    });
    const refused = await run('node', CLIENT_COMMAND, {
      env: { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: 'pets_000000000000_refused' },
    });
    const keyless = await run('node', CLIENT_COMMAND, {
      env: { ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: '' },
    });

    expect(succeeded).toMatchObject({ code: 0, stderr: '' });
    expect(succeeded.stdout.split('\n')).toEqual([
      expect.stringMatching(/^created #\d+ Biscuit \(category 1, available\)$/),
      expect.stringMatching(
        new RegExp(`^listed \\d+ pets .* on ${pagesAfterOneMore} page\\(s\\) of up to 20$`),
      ),
      expect.stringMatching(/^read back #\d+ Biscuit \(category 1, available\)$/),
      expect.stringMatching(/^the first page is unchanged: 304 Not Modified for W\/"[\w-]{27}"$/),
      expect.stringMatching(
        /^sold #(\d+) Biscuit \(category 1, sold\) with If-Match: "\1-1", now "\1-2"$/,
      ),
      expect.stringMatching(/^a second sale with "\d+-1" is refused: 412 PRECONDITION_FAILED$/),
      '',
    ]);
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'The API key was refused (Invalid API key). Create one at the repository root with: ' +
        'npm run --silent apikey -- create <name>\n',
    });
    expect(keyless).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Set ANIMAL_STORE_API_KEY to an API key (npm start prints one on its first start).\n',
    });
  });
});
