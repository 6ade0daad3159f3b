import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { undoMigrationsThrough } from '../../support/migrations.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

describe.each(ENGINES)('the migration keeping one index on pet_events [%s]', (engine) => {
  let database: TestDatabase;
  let migrated: DataSource;

  const insertEvent = (petId: number) =>
    migrated.query(
      `INSERT INTO pet_events (type, occurred_at, pet_id, pet)
      VALUES ('pet.created', '2026-11-25T10:00:00.000Z', ${petId}, '{"id":${petId}}')`,
    );
  const petIds = async (): Promise<number[]> =>
    (await migrated.query('SELECT pet_id FROM pet_events ORDER BY tx, seq')).map(
      (row: { pet_id: number | string }) => Number(row.pet_id),
    );
  const indexes = async (): Promise<string[]> =>
    (engine === 'postgres'
      ? await migrated.query(
          `SELECT indexdef AS definition FROM pg_indexes WHERE tablename = 'pet_events' ORDER BY 1`,
        )
      : await migrated.query(
          `SELECT sql AS definition FROM sqlite_master
          WHERE type = 'index' AND tbl_name = 'pet_events' AND sql IS NOT NULL ORDER BY 1`,
        )
    ).map((row: { definition: string }) => row.definition);

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    migrated = await openDataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
    );
    // Events stored before the migration, as on a database upgraded in place.
    await undoMigrationsThrough(migrated, 'LeanPetEvents1795900000000');
    for (const petId of [1, 2, 3]) await insertEvent(petId);
    await migrated.runMigrations();
  });
  afterAll(async () => {
    await migrated?.destroy();
    await database?.drop();
  });

  it('keeps every event in its order, and a new one comes after them', async () => {
    await insertEvent(4);
    expect(await petIds()).toEqual([1, 2, 3, 4]);
  });

  it('leaves only the index the feed reads by', async () => {
    expect(await indexes()).toEqual(
      engine === 'postgres'
        ? ['CREATE UNIQUE INDEX pet_events_pkey ON public.pet_events USING btree (tx, seq)']
        : [],
    );
  });

  it('reverts: the indexes come back, the events stay', async () => {
    await undoMigrationsThrough(migrated, 'LeanPetEvents1795900000000');
    expect(await petIds()).toEqual([1, 2, 3, 4]);
    expect(await indexes()).toHaveLength(engine === 'postgres' ? 3 : 2);
  });
});
