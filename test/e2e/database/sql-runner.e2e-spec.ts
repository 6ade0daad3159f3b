import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { PostgresSqlRunner } from '../../../src/database/postgres-sql-runner.js';
import type { SqlRunner, Statement } from '../../../src/database/sql-runner.js';
import { SqliteSqlRunner } from '../../../src/database/sqlite-sql-runner.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

/** Thrown to roll a transaction back on purpose. */
class RollBack extends Error {}

describe.each(ENGINES)('SqlRunner on its own engine [%s]', (engine) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let db: SqlRunner;
  let insert: Statement<{ name: string }>;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    dataSource = await openDataSource(
      dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
    );
    db =
      engine === 'postgres' ? new PostgresSqlRunner(dataSource) : new SqliteSqlRunner(dataSource);
    insert = db.statement('INSERT INTO pets (name, category_id) VALUES (:name, 1) RETURNING id');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const names = async () =>
    (await db.read('SELECT name FROM pets ORDER BY id', [])).map((row) => row.name);

  it('keeps writes made while other transactions roll back, and nothing of those', async () => {
    await db.write('DELETE FROM pets', []);
    const rolledBack = async (i: number) => {
      await db
        .transaction(async (transaction) => {
          await transaction.query(insert.text, insert.values({ name: `rolled back ${i}` }));
          await transaction.query(insert.text, insert.values({ name: `rolled back too ${i}` }));
          throw new RollBack();
        })
        .catch((error: unknown) => {
          if (!(error instanceof RollBack)) throw error;
        });
    };
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 ? rolledBack(i) : db.write(insert.text, insert.values({ name: `kept ${i}` })),
      ),
    );

    expect((await names()).sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `kept ${i * 2}`).sort(),
    );
  });

  it('commits every statement of a transaction together', async () => {
    await db.write('DELETE FROM pets', []);
    await db.transaction(async (transaction) => {
      await transaction.query(insert.text, insert.values({ name: 'first' }));
      await transaction.query(insert.text, insert.values({ name: 'second' }));
    });
    expect(await names()).toEqual(['first', 'second']);
  });

  it.runIf(engine === 'postgres')(
    'prepares each statement once per connection and runs it by name after that',
    async () => {
      // Sequential statements take the same idle pooled connection, whose prepared statements
      // PostgreSQL lists in pg_prepared_statements.
      const byName = db.statement<{ name: string }>('SELECT name FROM pets WHERE name = :name');
      expect(await db.read(byName.text, byName.values({ name: 'first' }))).toEqual([
        { name: 'first' },
      ]);
      expect(await db.read(byName.text, byName.values({ name: 'second' }))).toEqual([
        { name: 'second' },
      ]);
      const prepared = await db.read(
        'SELECT statement FROM pg_prepared_statements WHERE NOT from_sql',
        [],
      );
      expect(prepared.map((row) => row.statement)).toContain(
        'SELECT name FROM pets WHERE name = $1',
      );
    },
  );
});
