import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undoMigrationsThrough } from '../../support/migrations.js';
import { createPet } from '../../support/pets-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

const MIGRATION = 'PetCounts1796500000000';

describe.each(ENGINES)('the migration counting pets [%s]', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' });
    await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    await undoMigrationsThrough(t.dataSource, MIGRATION);
    // Pets stored before the migration, uncounted: it must count them once.
    for (const [name, categoryId, status] of [
      ['Tom', 2, 'sold'],
      ['Max', 2, null],
      ['Bella', 1, 'available'],
    ] as const)
      await t.dataSource.query(
        `INSERT INTO pets (name, category_id, status) VALUES ('${name}', ${categoryId}, ${status ? `'${status}'` : 'NULL'})`,
      );
    await t.dataSource.runMigrations();
  });
  afterAll(() => t?.close());

  it('counts the pets already stored, once, and every change after it', async () => {
    const total = await t.request('GET', '/v1/inventory');
    expect(total.json()).toEqual({ available: 2, pending: 0, sold: 1, unspecified: 1, total: 4 });
    await createPet(t, { name: 'Nemo', categoryId: 2, status: 'pending' });
    const second = await t.request('GET', '/v1/inventory?categoryId=2');
    expect(second.json()).toEqual({ available: 0, pending: 1, sold: 1, unspecified: 1, total: 3 });
  });
});
