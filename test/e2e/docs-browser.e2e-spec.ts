import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium } from '../support/browser.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const SCREENSHOT = fileURLToPath(new URL('../../test-results/docs-page.png', import.meta.url));

const EXAMPLE_PET = { name: 'Rex', categoryId: 1, status: 'available' };

// A machine without Chromium skips these tests; in CI they must run, so there they fail instead.
describe.skipIf(!chromiumInstalled() && !process.env.CI)(
  'Swagger UI at /docs in Chromium, against the real server [browser]',
  () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let browser: Browser;
    let key: string;
    let pendingPet: Record<string, unknown>;
    let context: BrowserContext;
    let page: Page;
    let pageErrors: Error[];

    beforeAll(async () => {
      browser = await launchChromium();
      database = await createTestDatabase('sqlite');
      server = await startServerAt(database);
      key = await createApiKey(database);
      pendingPet = await createPetOverHttp(server.baseUrl, key, {
        name: 'Bella',
        categoryId: 2,
        status: 'pending',
      });
    });
    afterAll(async () => {
      await browser?.close();
      server?.child.kill('SIGKILL');
      await server?.exited;
      await database?.drop();
    });

    // A context per test: its own localStorage, where Swagger UI persists the authorization.
    beforeEach(async () => {
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      context.setDefaultTimeout(10_000);
      page = await context.newPage();
      pageErrors = [];
      page.on('pageerror', (error) => pageErrors.push(error));
      await page.goto(`${server.baseUrl}/docs`);
    });
    afterEach(async () => {
      await context.close();
      expect(pageErrors).toEqual([]);
    });

    // Functions passed to evaluate() run in the page. The project type-checks without the DOM
    // library, so the elements they receive are untyped here.
    it('lists the six operations under the animals tag, getPet struck through as deprecated', async () => {
      const animals = page.locator('.opblock-tag-section', {
        has: page.locator('#operations-tag-animals'),
      });
      const operations = animals.locator('.opblock');
      await operations.first().waitFor();

      expect(await operations.evaluateAll((blocks) => blocks.map((block) => block.id))).toEqual([
        'operations-animals-listPets',
        'operations-animals-createPet',
        'operations-animals-getPet',
        'operations-animals-updatePet',
        'operations-animals-deletePet',
        'operations-animals-getInventory',
      ]);
      expect(await summaries(operations)).toEqual([
        'GET /pets List all animals',
        'POST /pets Add an animal',
        'GET /pets/{petId} Get an animal (deprecated)',
        'PATCH /pets/{petId} Change an animal',
        'DELETE /pets/{petId} Remove an animal',
        'GET /inventory Count the animals by status',
      ]);
      const deprecated = await operations.evaluateAll((blocks) =>
        blocks.map((block) => block.classList.contains('opblock-deprecated')),
      );
      expect(deprecated).toEqual([false, false, true, false, false, false]);
      const getPetPath = operation(page, 'getPet').locator('[data-path]');
      const decoration = await getPetPath.evaluate(
        (path) => path.ownerDocument.defaultView.getComputedStyle(path).textDecorationLine,
      );
      expect(decoration).toBe('line-through');
    });

    it('offers the server from PUBLIC_BASE_URL first, then staging', async () => {
      const servers = page.locator('.servers select');

      expect(await servers.inputValue()).toBe(`${server.baseUrl}/v1`);
      expect(await servers.locator('option').allInnerTexts()).toEqual([
        `${server.baseUrl}/v1 - Production`,
        'https://staging.api.animal-store.example/v1 - Staging',
      ]);
    });

    it('without authorising, Execute on listPets shows the 401 Error body', async () => {
      const listPets = operation(page, 'listPets');
      await tryItOut(listPets);

      const response = await execute(listPets);

      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
        status: 401,
      });
      expect(response.headers).toContain('www-authenticate: Bearer realm="animal-store"');
    });

    it('after Authorize with a real key, Execute on listPets filtered by status shows 200 and the pets', async () => {
      await authorize(page, key);
      const listPets = operation(page, 'listPets');
      await tryItOut(listPets);
      await listPets.locator('tr[data-param-name="status"] select').selectOption('pending');

      const response = await execute(listPets);

      expect(response.requestUrl).toBe(`${server.baseUrl}/v1/pets?limit=20&status=pending`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([pendingPet]);
      expect(response.headers).toContain('content-type: application/json; charset=utf-8');
    });

    it('createPet with the pre-filled example body shows 201 and the created pet', async () => {
      await authorize(page, key);
      const createPet = operation(page, 'createPet');
      await tryItOut(createPet);
      const body = createPet.locator('textarea.body-param__text');
      expect(JSON.parse(await body.inputValue())).toEqual(EXAMPLE_PET);

      const response = await execute(createPet);

      expect(response.status).toBe(201);
      expect(response.body).toEqual({ id: expect.any(Number), ...EXAMPLE_PET });
      const stored = await fetch(`${server.baseUrl}/v1/pets/${response.body.id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(await stored.json()).toEqual(response.body);

      await mkdir(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // The Idempotency-Key field starts empty: a second Execute with another body adds a second
      // pet instead of replaying the first (or answering 422) for every reader of the docs.
      await body.fill(JSON.stringify({ ...EXAMPLE_PET, name: 'Max' }));
      await createPet.getByRole('button', { name: 'Execute' }).click();
      const shownBody = createPet.locator(
        '.live-responses-table tbody tr.response .highlight-code code',
      );
      await expect
        .poll(async () => JSON.parse(await shownBody.innerText()).name, { timeout: 10_000 })
        .toBe('Max');
      const second = await readResponse(createPet);
      expect(second.status).toBe(201);
      expect(second.body.id).not.toBe(response.body.id);
      expect(second.headers).not.toContain('idempotent-replayed');
    });

    it('updatePet sells a pet as a merge patch with If-Match, then answers 409 to a second sale', async () => {
      const pet = await createPetOverHttp(server.baseUrl, key, { name: 'Tom', categoryId: 3 });
      const id = pet.id as number;
      await authorize(page, key);
      const updatePet = operation(page, 'updatePet');
      await tryItOut(updatePet);
      expect(await updatePet.locator('.body-param-content-type select').inputValue()).toBe(
        'application/merge-patch+json',
      );
      await updatePet.locator('tr[data-param-name="petId"] input').fill(String(id));
      await updatePet.locator('tr[data-param-name="If-Match"] input').fill(`"${id}-1"`);
      await updatePet.locator('textarea.body-param__text').fill(JSON.stringify({ status: 'sold' }));

      const sold = await execute(updatePet);

      expect(sold.requestUrl).toBe(`${server.baseUrl}/v1/pets/${id}`);
      expect(sold.status).toBe(200);
      expect(sold.body).toEqual({ ...pet, status: 'sold' });
      expect(sold.headers).toContain(`etag: "${id}-2"`);

      await updatePet.locator('tr[data-param-name="If-Match"] input').fill('');
      await updatePet.getByRole('button', { name: 'Execute' }).click();
      const shownStatus = updatePet.locator(
        '.live-responses-table tbody tr.response td.response-col_status',
      );
      await expect.poll(() => shownStatus.innerText(), { timeout: 10_000 }).toContain('409');
      const again = await readResponse(updatePet);
      expect(again.body).toEqual({
        code: 'INVALID_TRANSITION',
        message: `Pet ${id} is sold: its status can no longer change (asked for sold)`,
        status: 409,
      });
    });

    it('places an order with createOrder and completes it with completeOrder: the pet is sold', async () => {
      const pet = await createPetOverHttp(server.baseUrl, key, {
        name: 'Luna',
        categoryId: 4,
        status: 'available',
      });
      await authorize(page, key);
      const createOrder = page.locator('#operations-orders-createOrder');
      await tryItOut(createOrder);
      const body = createOrder.locator('textarea.body-param__text');
      expect(Object.keys(JSON.parse(await body.inputValue()))).toEqual(['petId', 'holdSeconds']);
      await body.fill(JSON.stringify({ petId: pet.id, holdSeconds: 600 }));

      const placed = await execute(createOrder);

      expect(placed.requestUrl).toBe(`${server.baseUrl}/v1/orders`);
      expect(placed.status).toBe(201);
      expect(placed.body).toMatchObject({ petId: pet.id, status: 'open' });
      const completeOrder = page.locator('#operations-orders-completeOrder');
      await tryItOut(completeOrder);
      await completeOrder
        .locator('tr[data-param-name="orderId"] input')
        .fill(String(placed.body.id));

      const completed = await execute(completeOrder);

      expect(completed.status).toBe(200);
      expect(completed.body).toEqual({
        ...placed.body,
        status: 'completed',
        closedAt: expect.any(String),
      });
      const stored = await fetch(`${server.baseUrl}/v1/pets/${String(pet.id)}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(await stored.json()).toEqual({ ...pet, status: 'sold' });
    });

    it('putCategory names a category id with the pre-filled body, then renames it: 201, then 200', async () => {
      await authorize(page, key);
      const putCategory = operation(page, 'putCategory', 'categories');
      await tryItOut(putCategory);
      await putCategory.locator('tr[data-param-name="categoryId"] input').fill('7');

      const named = await execute(putCategory);

      expect(named.requestUrl).toBe(`${server.baseUrl}/v1/categories/7`);
      expect(named.status).toBe(201);
      expect(named.body).toEqual({ id: 7, name: 'Dogs' });
      expect(named.headers).toContain('etag: "7-1"');

      await putCategory.locator('tr[data-param-name="If-Match"] input').fill('"7-1"');
      await putCategory
        .locator('textarea.body-param__text')
        .fill(JSON.stringify({ name: 'Hounds' }));
      await putCategory.getByRole('button', { name: 'Execute' }).click();
      const shownStatus = putCategory.locator(
        '.live-responses-table tbody tr.response td.response-col_status',
      );
      await expect.poll(() => shownStatus.innerText(), { timeout: 10_000 }).toContain('200');
      const renamed = await readResponse(putCategory);
      expect(renamed.body).toEqual({ id: 7, name: 'Hounds' });
      expect(renamed.headers).toContain('etag: "7-2"');
    });

    it('deletePet removes a pet with If-Match: 204, then 404 for the same id', async () => {
      const pet = await createPetOverHttp(server.baseUrl, key, { name: 'Typo', categoryId: 4 });
      const id = pet.id as number;
      await authorize(page, key);
      const deletePet = operation(page, 'deletePet');
      await tryItOut(deletePet);
      await deletePet.locator('tr[data-param-name="petId"] input').fill(String(id));
      await deletePet.locator('tr[data-param-name="If-Match"] input').fill(`"${id}-1"`);

      await deletePet.getByRole('button', { name: 'Execute' }).click();
      const shownStatus = deletePet.locator(
        '.live-responses-table tbody tr.response td.response-col_status',
      );
      await expect.poll(() => shownStatus.innerText(), { timeout: 10_000 }).toContain('204');
      expect(await deletePet.locator('.request-url pre').innerText()).toBe(
        `${server.baseUrl}/v1/pets/${id}`,
      );

      await deletePet.locator('tr[data-param-name="If-Match"] input').fill('');
      await deletePet.getByRole('button', { name: 'Execute' }).click();
      await expect.poll(() => shownStatus.innerText(), { timeout: 10_000 }).toContain('404');
      const gone = await readResponse(deletePet);
      expect(gone.body).toEqual({
        code: 'NOT_FOUND',
        message: `No pet with id ${id}`,
        status: 404,
      });
    });

    it('shows under createWebhook the petEvent callback: the signed POST to the webhook URL, its headers and what each answer means', async () => {
      const createWebhook = page.locator('#operations-webhooks-createWebhook');
      await createWebhook.locator('.opblock-summary-control').click();
      await createWebhook.getByText('Callbacks', { exact: true }).click();
      const delivery = createWebhook.locator('#operations-callbacks-receivePetEvent');
      await delivery.locator('.opblock-summary-control').click();

      expect(await createWebhook.locator('.callbacks-container h2').allInnerTexts()).toEqual([
        'petEvent',
      ]);
      expect(await summaries(delivery)).toEqual([
        'POST {$request.body#/url} An event delivered to the webhook',
      ]);
      const headers = delivery.locator('tr[data-param-in="header"]');
      expect(await headers.evaluateAll((rows) => rows.map((row) => row.dataset.paramName))).toEqual(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
      );
      const statuses = delivery.locator('.responses-table tr.response td.response-col_status');
      expect((await statuses.allInnerTexts()).sort()).toEqual([
        '2XX',
        '410',
        '429',
        '503',
        'default',
      ]);
      const example = delivery.locator('.opblock-section-request-body .highlight-code code');
      expect(JSON.parse(await example.innerText())).toMatchObject({
        id: '7301-42',
        type: 'pet.updated',
      });
    });

    it('keeps the authorization across a reload (persistAuthorization)', async () => {
      await authorize(page, key);
      await page.reload();
      const listPets = operation(page, 'listPets');
      await tryItOut(listPets);

      expect((await execute(listPets)).status).toBe(200);
    });
  },
);

/** The app as `npm start` runs it, with "Try it out" pointed at it. */
async function startServerAt(database: TestDatabase): Promise<ServerProcess> {
  // The document's servers come from PUBLIC_BASE_URL, so the port must be known before the start.
  const port = await freePort();
  return startServer({
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
    RATE_LIMIT_PER_MINUTE: '0',
  });
}

/** A real key, made as an operator makes one: with the apikey CLI. */
async function createApiKey(database: TestDatabase): Promise<string> {
  const created = await runApiKeyCli(['create', 'browser'], database.url);
  expect(created).toMatchObject({ code: 0, stderr: '' });
  return created.stdout.trim();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function createPetOverHttp(
  baseUrl: string,
  key: string,
  pet: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(pet),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Record<string, unknown>;
}

function operation(page: Page, operationId: string, tag = 'animals'): Locator {
  return page.locator(`#operations-${tag}-${operationId}`);
}

/** "METHOD path summary" of each operation, as the collapsed blocks show them. */
function summaries(operations: Locator): Promise<string[]> {
  return operations.evaluateAll((blocks) =>
    blocks.map((block) =>
      ['.opblock-summary-method', '[data-path]', '.opblock-summary-description']
        .map((part) => block.querySelector(part).innerText)
        .join(' '),
    ),
  );
}

/** Through the Authorize dialog, as a reader would: paste the key, apply, close. */
async function authorize(page: Page, key: string): Promise<void> {
  await page
    .locator('.auth-wrapper')
    .getByRole('button', { name: 'Authorize', exact: true })
    .click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('#auth-bearer-value').fill(key);
  await dialog.getByRole('button', { name: 'Apply credentials' }).click();
  await dialog.getByRole('heading', { name: 'Authorized', exact: true }).waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'detached' });
}

async function tryItOut(block: Locator): Promise<void> {
  await block.locator('.opblock-summary-control').click();
  await block.getByRole('button', { name: 'Try it out' }).click();
}

interface LiveResponse {
  requestUrl: string;
  status: number;
  body: any;
  headers: string;
}

/** Presses Execute and reads the "Server response" section the page renders. */
async function execute(block: Locator): Promise<LiveResponse> {
  await block.getByRole('button', { name: 'Execute' }).click();
  return readResponse(block);
}

async function readResponse(block: Locator): Promise<LiveResponse> {
  const response = block.locator('.live-responses-table tbody tr.response');
  await response.waitFor();
  return {
    requestUrl: await block.locator('.request-url pre').innerText(),
    status: Number(await response.locator('.response-col_status').innerText()),
    body: JSON.parse(await response.locator('.highlight-code code').innerText()),
    headers: await response.locator('h5:text-is("Response headers") + pre').innerText(),
  };
}
