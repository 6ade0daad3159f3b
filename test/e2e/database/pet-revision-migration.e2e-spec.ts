import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { undoMigrationsThrough } from '../../support/migrations.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

describe.each(ENGINES)('the migration adding pets.revision [%s]', (engine) => {
  let database: TestDatabase;
  let migrated: DataSource;

  const pets = async (): Promise<Record<string, unknown>[]> =>
    migrated.query('SELECT * FROM pets ORDER BY id');

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    migrated = await openDataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
    );
    // A pet stored before the migration, as on a database upgraded in place.
    await undoMigrationsThrough(migrated, 'PetRevision1795700000000');
    await migrated.query(`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'sold')`);
    await migrated.runMigrations();
  });
  afterAll(async () => {
    await migrated?.destroy();
    await database?.drop();
  });

  it('gives every existing pet revision 1, as a new pet has', async () => {
    await migrated.query(`INSERT INTO pets (name, category_id) VALUES ('Tom', 2)`);
    expect((await pets()).map(({ name, revision }) => [name, Number(revision)])).toEqual([
      ['Rex', 1],
      ['Tom', 1],
    ]);
  });

  it('reverts: the column goes, the pets stay', async () => {
    await undoMigrationsThrough(migrated, 'PetRevision1795700000000');
    const rows = await pets();
    expect(rows.map(({ name }) => name)).toEqual(['Rex', 'Tom']);
    expect(Object.keys(rows[0])).not.toContain('revision');
  });
});
