import type { components } from './api-schema.js';
import {
  createAnimalStoreClient,
  createPet,
  describePet,
  failure,
  nextPageQuery,
  type AnimalStoreClient,
  type Pet,
} from './example.js';

export type Category = components['schemas']['Category'];
export type Inventory = components['schemas']['Inventory'];

/**
 * Names category `id` (the id pets carry as `categoryId`): created says whether the id had no name
 * before. Naming it again with its own name changes nothing; a name another category has is 409
 * CATEGORY_NAME_TAKEN.
 */
export async function nameCategory(
  client: AnimalStoreClient,
  id: number,
  name: string,
): Promise<{ category: Category; created: boolean }> {
  const { data, error, response } = await client.PUT('/categories/{categoryId}', {
    params: { path: { categoryId: id } },
    body: { name },
  });
  if (data === undefined) throw failure('putCategory', error, response);
  return { category: data, created: response.status === 201 };
}

/**
 * Every pet of one category, optionally of one status, in id order: the first page asked for with
 * the filters, each next one by its `Link: <…>; rel="next"`, which carries them on.
 */
export async function listCategory(
  client: AnimalStoreClient,
  categoryId: number,
  status?: Pet['status'],
  pageSize = 20,
): Promise<Pet[]> {
  const pets: Pet[] = [];
  let page = await client.GET('/pets', {
    params: { query: { categoryId, status, limit: pageSize } },
  });
  for (;;) {
    const { data, error, response } = page;
    if (data === undefined) throw failure('listPets', error, response);
    pets.push(...data);
    const nextQuery = nextPageQuery(response, 'listPets');
    if (nextQuery === undefined) return pets;
    page = await client.GET('/pets', { querySerializer: () => nextQuery });
  }
}

/** How many animals are available, pending, sold and without a status: in all, or in a category. */
export async function countStock(
  client: AnimalStoreClient,
  categoryId?: number,
): Promise<Inventory> {
  const { data, error, response } = await client.GET('/inventory', {
    params: { query: { categoryId } },
  });
  if (data === undefined) throw failure('getInventory', error, response);
  return data;
}

export interface CatalogueResult {
  category: Category;
  added: Pet;
  listed: Pet[];
  stock: Inventory;
  categoryStock: Inventory;
}

/** The category the catalogue example names, and the pet it adds to it. */
export const EXAMPLE_CATEGORY = { id: 1, name: 'Dogs' };

/**
 * Names a category, adds a pet to it, lists the category's available animals, and counts the
 * stock in the store and in the category: what a shop front and its dashboard do.
 */
export async function runCatalogueExample({
  baseUrl,
  apiKey,
  log,
}: {
  baseUrl: string;
  apiKey: string;
  log: (line: string) => void;
}): Promise<CatalogueResult> {
  const client = createAnimalStoreClient(baseUrl, apiKey);
  const { id, name } = EXAMPLE_CATEGORY;

  const { category, created } = await nameCategory(client, id, name);
  log(`${created ? 'named' : 'kept'} category ${category.id} "${category.name}"`);

  const added = await createPet(client, { name: 'Biscuit', categoryId: id, status: 'available' });
  log(`added ${describePet(added)}`);

  const listed = await listCategory(client, id, 'available');
  log(`category "${category.name}" has ${listed.length} available animal(s)`);

  const stock = await countStock(client);
  const categoryStock = await countStock(client, id);
  log(`stock: ${describeStock(stock)}; in "${category.name}": ${describeStock(categoryStock)}`);
  return { category, added, listed, stock, categoryStock };
}

export function describeStock({ available, pending, sold, unspecified, total }: Inventory): string {
  return `${total} (${available} available, ${pending} pending, ${sold} sold, ${unspecified} without a status)`;
}
