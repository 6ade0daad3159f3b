import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { InitialSchema1795219200000 } from '../../../src/database/migrations/1795219200000-initial-schema.js';
import { IdempotencyKeys1795298400000 } from '../../../src/database/migrations/1795298400000-idempotency-keys.js';
import { IdempotencyKeysTable1795400000000 } from '../../../src/database/migrations/1795400000000-idempotency-keys-table.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

const EXPIRES_AT = Date.parse('2026-11-24T10:30:15.250Z');

describe.each(ENGINES)('the migration to idempotency_keys [%s]', (engine) => {
  let database: TestDatabase;
  let migrated: DataSource;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    const options = dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database);
    // The schema as it was before the move, with a claim stored the old way.
    const before = await new DataSource({
      ...options,
      migrations: [InitialSchema1795219200000, IdempotencyKeys1795298400000],
    }).initialize();
    await before.runMigrations();
    const p = (n: number) => (engine === 'postgres' ? `$${n}` : '?');
    await before.query(
      `INSERT INTO api_keys (name, prefix, key_hash) VALUES ('old', 'aaaaaaaaaaaa', ${p(1)})`,
      ['0'.repeat(64)],
    );
    await before.query(`INSERT INTO pets (name, category_id) VALUES ('Plain', 1)`);
    await before.query(
      `INSERT INTO pets (name, category_id, idempotency_api_key_id, idempotency_key,
         idempotency_request_hash, idempotency_expires_at)
       VALUES ('Claimed', 2, 1, 'order-1', 'hash-1', ${p(1)})`,
      [EXPIRES_AT],
    );
    await before.destroy();
    // Up to this migration and no further, so that undoing the last one undoes it.
    migrated = await openDataSource({
      ...options,
      migrations: [
        InitialSchema1795219200000,
        IdempotencyKeys1795298400000,
        IdempotencyKeysTable1795400000000,
      ],
    });
  });
  afterAll(async () => {
    await migrated?.destroy();
    await database?.drop();
  });

  it('moves every existing claim into its own table, with its pet and expiry', async () => {
    const claims = await migrated.query(
      'SELECT api_key_id, key, request_hash, pet_id, expires_at FROM idempotency_keys',
    );
    expect(
      claims.map((claim: Record<string, unknown>) => ({
        ...claim,
        pet_id: Number(claim.pet_id),
        expires_at: new Date(claim.expires_at as string | Date).getTime(),
      })),
    ).toEqual([
      { api_key_id: 1, key: 'order-1', request_hash: 'hash-1', pet_id: 2, expires_at: EXPIRES_AT },
    ]);
    // SQLite compares expiries as text: the moved ones must be in the form the service binds.
    if (engine === 'sqlite') expect(claims[0].expires_at).toBe(new Date(EXPIRES_AT).toISOString());
  });

  it('leaves pets with exactly their own columns', async () => {
    const rows = await migrated.query('SELECT * FROM pets ORDER BY id');
    expect(
      rows.map((row: Record<string, unknown>) => ({
        ...row,
        id: Number(row.id),
        category_id: Number(row.category_id),
      })),
    ).toEqual([
      { id: 1, name: 'Plain', category_id: 1, status: null },
      { id: 2, name: 'Claimed', category_id: 2, status: null },
    ]);
  });

  it('reverts: the claims go back onto their pets and the table goes', async () => {
    await migrated.undoLastMigration();
    const rows = await migrated.query(
      `SELECT id, idempotency_api_key_id AS api_key_id, idempotency_key AS key,
         idempotency_request_hash AS request_hash, idempotency_expires_at AS expires_at
       FROM pets ORDER BY id`,
    );
    expect(
      rows.map((row: Record<string, unknown>) => ({
        ...row,
        id: Number(row.id),
        api_key_id: row.api_key_id === null ? null : Number(row.api_key_id),
        expires_at: row.expires_at === null ? null : Number(row.expires_at),
      })),
    ).toEqual([
      { id: 1, api_key_id: null, key: null, request_hash: null, expires_at: null },
      { id: 2, api_key_id: 1, key: 'order-1', request_hash: 'hash-1', expires_at: EXPIRES_AT },
    ]);
    await expect(migrated.query('SELECT 1 FROM idempotency_keys')).rejects.toThrow();
  });
});
