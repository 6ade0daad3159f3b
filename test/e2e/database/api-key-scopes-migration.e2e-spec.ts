import { DataSource, type DataSourceOptions } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import { ApiKeyLookup } from '../../../src/auth/api-key-lookup.js';
import { ApiKeyUsage } from '../../../src/auth/api-key-usage.js';
import { ApiKeyVerifier } from '../../../src/auth/api-key-verifier.js';
import { RecentlyVerifiedKeys } from '../../../src/auth/recently-verified-keys.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { sqlRunnerFor } from '../../../src/database/sql-runner-for.js';
import { InitialSchema1795219200000 } from '../../../src/database/migrations/1795219200000-initial-schema.js';
import { IdempotencyKeys1795298400000 } from '../../../src/database/migrations/1795298400000-idempotency-keys.js';
import { IdempotencyKeysTable1795400000000 } from '../../../src/database/migrations/1795400000000-idempotency-keys-table.js';
import { ApiKeyScopesExpiry1795500000000 } from '../../../src/database/migrations/1795500000000-api-key-scopes-expiry.js';
import { hashApiKey } from '../../../src/auth/api-key.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

const OLD_KEY = `pets_aaaaaaaaaaaa_${'A'.repeat(43)}`;

describe.each(ENGINES)('the migration to API key scopes and expiry [%s]', (engine) => {
  let database: TestDatabase;
  let migrated: DataSource;
  let options: DataSourceOptions;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    options = dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database);
    // The schema as it was before, with a key issued then.
    const before = await new DataSource({
      ...options,
      migrations: [
        InitialSchema1795219200000,
        IdempotencyKeys1795298400000,
        IdempotencyKeysTable1795400000000,
      ],
    }).initialize();
    await before.runMigrations();
    const p = (n: number) => (engine === 'postgres' ? `$${n}` : '?');
    await before.query(
      `INSERT INTO api_keys (name, prefix, key_hash) VALUES ('old', 'aaaaaaaaaaaa', ${p(1)})`,
      [hashApiKey(OLD_KEY)],
    );
    await before.destroy();
    // Up to this migration and no further, so that undoing the last one undoes it.
    migrated = await openDataSource({
      ...options,
      migrations: [
        InitialSchema1795219200000,
        IdempotencyKeys1795298400000,
        IdempotencyKeysTable1795400000000,
        ApiKeyScopesExpiry1795500000000,
      ],
    });
  });
  afterAll(async () => {
    await migrated?.destroy();
    await database?.drop();
  });

  it('gives existing keys both scopes, no expiry and no last use', async () => {
    const [row] = await migrated.query(
      'SELECT name, scopes, expires_at, last_used_at FROM api_keys',
    );
    expect(row).toEqual({
      name: 'old',
      scopes: 'pets:read,pets:write',
      expires_at: null,
      last_used_at: null,
    });
  });

  it('an existing key still authenticates, with both scopes', async () => {
    // The service's entity has the columns of the later migrations too: run them, then undo them,
    // so the next test finds the schema of this migration.
    const current = await openDataSource({ ...options, entities: [ApiKeyEntity] });
    try {
      const db = sqlRunnerFor(current);
      const verifier = new ApiKeyVerifier(
        new ApiKeyLookup(db),
        new ApiKeyUsage(db),
        new RecentlyVerifiedKeys(),
      );
      expect(await verifier.verify(OLD_KEY)).toEqual({
        id: 1,
        name: 'old',
        prefix: 'aaaaaaaaaaaa',
        scopes: ['pets:read', 'pets:write'],
        expiresAt: null,
      });
    } finally {
      const later = (options.migrations as unknown[]).length - 4;
      for (let i = 0; i < later; i++) await current.undoLastMigration();
      await current.destroy();
    }
  });

  it('reverts: api_keys has exactly its earlier columns and keeps its rows', async () => {
    await migrated.undoLastMigration();
    const [row] = await migrated.query('SELECT * FROM api_keys');
    expect(Object.keys(row).sort()).toEqual(
      ['created_at', 'id', 'key_hash', 'name', 'prefix', 'revoked_at'].sort(),
    );
    expect(row).toMatchObject({ name: 'old', prefix: 'aaaaaaaaaaaa', revoked_at: null });
  });
});
