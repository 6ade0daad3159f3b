import type { Database as SqliteConnection } from 'better-sqlite3';
import { betterSqlite3 } from '../../../src/database/better-sqlite3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { PostgresSqlRunner } from '../../../src/database/postgres-sql-runner.js';
import type { SqlRunner, Statement } from '../../../src/database/sql-runner.js';
import { SqliteSqlRunner } from '../../../src/database/sqlite-sql-runner.js';
import { loadConfig } from '../../../src/config/app-config.js';
import {
  createTestDatabase,
  type Engine,
  ENGINES,
  type TestDatabase,
} from '../../support/test-database.js';

const Database = betterSqlite3();

/** Thrown to roll a transaction back on purpose. */
class RollBack extends Error {}

interface RunnerUnderTest {
  database: TestDatabase;
  db: SqlRunner;
  /** Inserts a pet named `name`. */
  insert: Statement<{ name: string }>;
  close(): Promise<void>;
}

/** The engine's runner on a fresh, migrated database of its own. */
async function openRunner(engine: Engine): Promise<RunnerUnderTest> {
  const database = await createTestDatabase(engine);
  const dataSource = await openDataSource(
    dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
  );
  const db =
    engine === 'postgres' ? new PostgresSqlRunner(dataSource) : new SqliteSqlRunner(dataSource);
  return {
    database,
    db,
    insert: db.statement('INSERT INTO pets (name, category_id) VALUES (:name, 1) RETURNING id'),
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

async function storedNames(db: SqlRunner): Promise<unknown[]> {
  return (await db.read('SELECT name FROM pets ORDER BY id', [])).map((row) => row.name);
}

describe.each(ENGINES)('SqlRunner on its own engine [%s]', (engine) => {
  let runner: RunnerUnderTest;
  let db: SqlRunner;
  let insert: Statement<{ name: string }>;
  beforeAll(async () => {
    runner = await openRunner(engine);
    ({ db, insert } = runner);
  });
  afterAll(() => runner?.close());

  const names = () => storedNames(db);

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

describe('SqliteSqlRunner: group commit (docs/architecture.md, "SQLite")', () => {
  let runner: RunnerUnderTest;
  let db: SqlRunner;
  let insert: Statement<{ name: string }>;
  beforeAll(async () => {
    runner = await openRunner('sqlite');
    ({ db, insert } = runner);
  });
  afterAll(() => runner?.close());

  const names = () => storedNames(db);
  /** Another connection to the file, as another process would read it. */
  let other: SqliteConnection;
  beforeAll(async () => {
    other = new Database(runner.database.url.slice('sqlite:'.length), { readonly: true });
    // A deferred foreign key is checked at COMMIT: a child without its parent fails the COMMIT.
    await db.write('CREATE TABLE parents (id integer PRIMARY KEY)', []);
    await db.write(
      `CREATE TABLE children (parent_id integer
       REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`,
      [],
    );
  });
  afterAll(() => other?.close());

  const committedNames = () =>
    other
      .prepare('SELECT name FROM pets ORDER BY id')
      .all()
      .map((row) => (row as { name: string }).name);

  it('checkpoints the WAL after 4,000 pages, not after SQLite\'s 1,000 (docs/performance.md, "SQLite checkpoints")', async () => {
    expect(await db.read('PRAGMA wal_autocheckpoint', [])).toEqual([{ wal_autocheckpoint: 4000 }]);
  });

  it('reads one snapshot a turn: a commit made by another process shows from the next turn on', async () => {
    await db.write('DELETE FROM pets', []);
    const writer = new Database(runner.database.url.slice('sqlite:'.length));
    try {
      const count = 'SELECT count(*) AS n FROM pets';
      const before = db.read(count, []);
      writer.prepare("INSERT INTO pets (name, category_id) VALUES ('elsewhere', 1)").run();
      const sameTurn = db.read(count, []);
      expect([await before, await sameTurn]).toEqual([[{ n: 0 }], [{ n: 0 }]]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(await db.read(count, [])).toEqual([{ n: 1 }]);
    } finally {
      writer.close();
    }
  });

  it("ends the turn's read transaction before a write or a transaction of the same turn", async () => {
    await db.write('DELETE FROM pets', []);
    const read = names();
    const written = db.write("INSERT INTO pets (name, category_id) VALUES ('written', 1)", []);
    const transacted = db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'transacted' })),
    );
    expect(await read).toEqual([]);
    await written;
    expect(committedNames()).toEqual(['written']);
    await transacted;
    expect(committedNames()).toEqual(['written', 'transacted']);
    expect(await names()).toEqual(['written', 'transacted']);
  });

  it('fails a read alone: the other reads of its turn and the write after them go on', async () => {
    await db.write('DELETE FROM pets', []);
    const failed = db.read('SELECT name FROM no_such_table', []);
    const read = names();
    const written = db.write("INSERT INTO pets (name, category_id) VALUES ('written', 1)", []);
    await expect(failed).rejects.toThrow('no such table: no_such_table');
    expect(await read).toEqual([]);
    await written;
    expect(committedNames()).toEqual(['written']);
  });

  it('answers each transaction of a turn only once its COMMIT made it visible to others', async () => {
    await db.write('DELETE FROM pets', []);
    const seen = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db
          .transaction((transaction) =>
            transaction.query(insert.text, insert.values({ name: `pet ${i}` })),
          )
          .then(() => committedNames().includes(`pet ${i}`)),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 20 }, () => true));
  });

  it('keeps a read started meanwhile from seeing what a transaction wrote and then undid', async () => {
    await db.write('DELETE FROM pets', []);
    const undone = db.transaction(async (transaction) => {
      await transaction.query(insert.text, insert.values({ name: 'undone' }));
      throw new RollBack();
    });
    const read = names();
    await expect(undone).rejects.toBeInstanceOf(RollBack);
    expect(await read).toEqual([]);
  });

  it('fails every transaction of a turn whose COMMIT fails, and stores none of them', async () => {
    await db.write('DELETE FROM pets', []);
    const kept = db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'would be kept' })),
    );
    const orphan = db.transaction((transaction) =>
      transaction.query('INSERT INTO children (parent_id) VALUES (1)', []),
    );
    const outcomes = await Promise.allSettled([kept, orphan]);
    expect(outcomes).toEqual([
      {
        status: 'rejected',
        reason: expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }),
      },
      {
        status: 'rejected',
        reason: expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }),
      },
    ]);
    expect(await names()).toEqual([]);

    await db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'after' })),
    );
    expect(committedNames()).toEqual(['after']);
  });

  it('fails the turn under a transaction that ends the SQLite transaction; later ones start anew', async () => {
    await db.write('DELETE FROM pets', []);
    const before = db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'before' })),
    );
    const ending = db.transaction(async (transaction) => {
      await transaction.query('ROLLBACK', []);
      throw new RollBack();
    });
    const after = db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'after' })),
    );
    const outcomes = await Promise.allSettled([before, ending, after]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect(committedNames()).toEqual(['after']);
  });

  it('answers a failed transaction after the COMMIT of its turn too', async () => {
    await db.write('DELETE FROM pets', []);
    const written = db.transaction((transaction) =>
      transaction.query(insert.text, insert.values({ name: 'never committed' })),
    );
    // It saw the first one's pet, which the failed COMMIT then undoes: it must fail as well.
    const refused = db.transaction(async (transaction) => {
      const [row] = await transaction.query('SELECT count(*) AS n FROM pets', []);
      throw new Error(`saw ${String(row.n)} pet`);
    });
    const orphan = db.transaction((transaction) =>
      transaction.query('INSERT INTO children (parent_id) VALUES (2)', []),
    );
    const outcomes = await Promise.allSettled([written, refused, orphan]);
    expect(outcomes.map((outcome) => outcome.status === 'rejected' && outcome.reason.code)).toEqual(
      [
        'SQLITE_CONSTRAINT_FOREIGNKEY',
        'SQLITE_CONSTRAINT_FOREIGNKEY',
        'SQLITE_CONSTRAINT_FOREIGNKEY',
      ],
    );
    expect(committedNames()).toEqual([]);
  });
});
