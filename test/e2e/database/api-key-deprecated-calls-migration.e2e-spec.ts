import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { undoMigrationsThrough } from '../../support/migrations.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

describe.each(ENGINES)('the migration adding last_deprecated_call_at [%s]', (engine) => {
  let database: TestDatabase;
  let migrated: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    migrated = await openDataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
    );
    await migrated.query(
      `INSERT INTO api_keys (name, prefix, key_hash) VALUES ('old', 'aaaaaaaaaaaa', 'h')`,
    );
  });
  afterAll(async () => {
    await migrated?.destroy();
    await database?.drop();
  });

  it('gives every key an empty last deprecated call', async () => {
    expect(await migrated.query('SELECT name, last_deprecated_call_at FROM api_keys')).toEqual([
      { name: 'old', last_deprecated_call_at: null },
    ]);
  });

  it('reverts: the column goes, the keys stay', async () => {
    await undoMigrationsThrough(migrated, 'ApiKeyDeprecatedCalls1795600000000');
    const [row] = await migrated.query('SELECT * FROM api_keys');
    expect(row).toMatchObject({ name: 'old', prefix: 'aaaaaaaaaaaa' });
    expect(Object.keys(row)).not.toContain('last_deprecated_call_at');
    expect(Object.keys(row)).toContain('last_used_at');
  });
});
