import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import { PostgresSqlRunner } from '../../../src/database/postgres-sql-runner.js';
import { OrdersRepository } from '../../../src/orders/orders.repository.js';
import { PetsRepository } from '../../../src/pets/pets.repository.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

/** What the one connection has prepared, and how often PostgreSQL planned each. */
interface PreparedStatement {
  name: string;
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

describe.skipIf(!ENGINES.includes('postgres'))(
  "the service's connections plan each statement once [postgres]",
  () => {
    let database: TestDatabase;
    let dataSource: DataSource;
    let db: PostgresSqlRunner;
    let pets: PetsRepository;
    let orders: OrdersRepository;

    const prepared = async () =>
      (await db.read(
        'SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements',
        [],
      )) as unknown as PreparedStatement[];
    /** The index the plan of prepared statement `name` reads, run with `parameters`. */
    const indexOf = async (name: string, parameters: string) => {
      const [row] = await db.read(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${parameters})`, []);
      return JSON.stringify(row['QUERY PLAN']).match(/"Index Name":"(\w+)"/)?.[1];
    };

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      const options = dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database);
      await (await openDataSource(options)).destroy();
      // The server's options on one connection, so every statement below shares its session.
      dataSource = await new DataSource({
        ...options,
        poolSize: 1,
      } as DataSourceOptions).initialize();
      db = new PostgresSqlRunner(dataSource);
      pets = new PetsRepository(db);
      orders = new OrdersRepository(db);
      // 10,000 rows, as many as the bench seeds: enough for a plan to weigh its indexes.
      await db.write(
        `INSERT INTO pets (name, category_id, status)
        SELECT 'pet ' || n, 1, (ARRAY['available', 'pending', 'sold'])[n % 3 + 1]
        FROM generate_series(1, 10000) AS n`,
        [],
      );
      await db.write(
        `INSERT INTO orders (pet_id, status, created_at, expires_at)
        SELECT n, (ARRAY['completed', 'cancelled', 'expired'])[n % 3 + 1], now(), now()
        FROM generate_series(1, 10000) AS n`,
        [],
      );
      await db.write('ANALYZE', []);
    });
    afterAll(async () => {
      await dataSource?.destroy();
      await database?.drop();
    });

    const pagesPrepared = async () =>
      (await prepared()).filter((s) =>
        ['FROM pets p', 'FROM orders o'].some((table) => s.statement.includes(table)),
      );

    it('plans the pages once for every cursor and limit, never again per run', async () => {
      const runs: [afterId: number, limit: number][] = [
        [0, 21],
        [9_975, 21],
        [500, 101],
        [0, 2],
        [42, 21],
        [7_000, 51],
        [0, 21],
      ];
      for (const [afterId, limit] of runs) {
        await pets.findPage({ afterId, limit });
        await pets.findPage({ afterId, limit, status: 'sold' });
        await orders.findPage({ afterId, limit, status: 'completed' });
      }
      const statements = await pagesPrepared();
      expect(statements).toHaveLength(3);
      for (const { statement, generic_plans, custom_plans } of statements) {
        expect({ statement, generic_plans, custom_plans }).toEqual({
          statement,
          generic_plans: String(runs.length),
          custom_plans: '0',
        });
      }
    });

    it("reads a status's page off the (status, id) index, whatever the status", async () => {
      await pets.findPage({ afterId: 0, limit: 21, status: 'pending' });
      await orders.findPage({ afterId: 0, limit: 21, status: 'open' });
      const statements = await pagesPrepared();
      const [petsOfStatus, ordersOfStatus] = ['p', 'o'].map(
        (alias) => statements.find((s) => s.statement.includes(`${alias}.status = $1`))!.name,
      );
      expect(await indexOf(petsOfStatus, "'sold', 9000, 21")).toBe('pets_status_id_idx');
      expect(await indexOf(ordersOfStatus, "'open', 0, 21")).toBe('orders_status_id_idx');
    });

    it('answers as before: the page of a status after the cursor, in id order', async () => {
      // The seeded rows: pet n is sold when n % 3 is 2, order n expired when n % 3 is 2.
      const idsAfter = (afterId: number, count: number) =>
        Array.from({ length: 30 }, (_, i) => afterId + 1 + i)
          .filter((n) => n % 3 === 2)
          .slice(0, count);
      const page = await pets.findPage({ afterId: 9_980, limit: 5, status: 'sold' });
      expect(page.map(({ id, status }) => [id, status])).toEqual(
        idsAfter(9_980, 5).map((id) => [id, 'sold']),
      );
      const ordersPage = await orders.findPage({ afterId: 9_990, limit: 3, status: 'expired' });
      expect(ordersPage.map(({ id, status }) => [id, status])).toEqual(
        idsAfter(9_990, 3).map((id) => [id, 'expired']),
      );
    });
  },
);
