import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countStock,
  describeStock,
  EXAMPLE_CATEGORY,
  listCategory,
  nameCategory,
  runCatalogueExample,
} from '../../examples/client/src/catalogue.js';
import {
  AnimalStoreError,
  createAnimalStoreClient,
  createPet,
} from '../../examples/client/src/example.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { ENGINES } from '../support/test-database.js';

describe.each(ENGINES)('typed client example: the catalogue [%s]', (engine) => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `${await t.app.getUrl()}/v1`;
  });
  afterAll(() => t?.close());

  it('names a category, adds a pet to it, lists its available animals and counts the stock', async () => {
    const client = createAnimalStoreClient(baseUrl, t.key);
    for (let i = 0; i < 25; i++)
      await createPet(client, { name: `Pup ${i}`, categoryId: 1, status: 'available' });
    await createPet(client, { name: 'Tom', categoryId: 2, status: 'sold' });
    const lines: string[] = [];

    const result = await runCatalogueExample({ baseUrl, apiKey: t.key, log: (l) => lines.push(l) });

    expect(result.category).toEqual(EXAMPLE_CATEGORY);
    expect(result.added).toEqual({
      id: expect.any(Number),
      name: 'Biscuit',
      categoryId: 1,
      status: 'available',
    });
    expect(result.listed).toHaveLength(26);
    expect(result.listed.at(-1)).toEqual(result.added);
    expect(result.stock).toEqual({ available: 26, pending: 0, sold: 1, unspecified: 0, total: 27 });
    expect(result.categoryStock).toEqual({
      available: 26,
      pending: 0,
      sold: 0,
      unspecified: 0,
      total: 26,
    });
    expect(lines).toEqual([
      'named category 1 "Dogs"',
      `added #${result.added.id} Biscuit (category 1, available)`,
      'category "Dogs" has 26 available animal(s)',
      `stock: ${describeStock(result.stock)}; in "Dogs": ${describeStock(result.categoryStock)}`,
    ]);

    // A second run keeps the name: 200, not 201.
    const again = await runCatalogueExample({ baseUrl, apiKey: t.key, log: () => {} });
    expect(again.category).toEqual(EXAMPLE_CATEGORY);
    expect((await countStock(client, 1)).available).toBe(27);
    expect(await listCategory(client, 2, 'sold', 1)).toEqual([
      { id: expect.any(Number), name: 'Tom', categoryId: 2, status: 'sold' },
    ]);
  });

  it("surfaces CATEGORY_NAME_TAKEN as the API's Error body", async () => {
    const client = createAnimalStoreClient(baseUrl, t.key);
    await nameCategory(client, 5, 'Cats');
    const refused = await nameCategory(client, 6, 'Cats').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AnimalStoreError);
    expect((refused as AnimalStoreError).body).toEqual({
      code: 'CATEGORY_NAME_TAKEN',
      message: 'Another category is already named "Cats": choose another name',
      status: 409,
    });
  });
});
