import pg from 'pg';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import {
  dataSourceOptions,
  openDataSource,
  postgresClientConfig,
} from '../../../src/database/data-source.js';
import { PipelinedReads } from '../../../src/database/pipelined-reads.js';
import { waitFor } from '../../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../../support/test-database.js';

const PET_BY_ID = 'SELECT id, name FROM pets WHERE id = $1';
const BACKEND = 'SELECT pg_backend_pid() AS pid';

describe.skipIf(!ENGINES.includes('postgres'))(
  'reads pipelined on connections of their own [postgres]',
  () => {
    let database: TestDatabase;
    let dataSource: DataSource;
    let reads: PipelinedReads;
    /** Outside the reads' connections: ends them as a failover or an operator would. */
    let admin: pg.Client;

    const petById = async (id: number) => (await reads.query('pet', PET_BY_ID, [id]))[0];
    /** The server processes behind the reads' connections, one read on each. */
    const backends = async () =>
      new Set(
        await Promise.all([1, 2].map(async () => (await reads.query('pid', BACKEND, []))[0].pid)),
      );

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      dataSource = await openDataSource(
        dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database),
      );
      await dataSource.query(
        "INSERT INTO pets (name, category_id) SELECT 'pet ' || i, 1 FROM generate_series(1, 100) i",
      );
      reads = new PipelinedReads(postgresClientConfig(database.url));
      admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
    });
    afterAll(async () => {
      await reads?.onApplicationShutdown();
      await admin?.end();
      await dataSource?.destroy();
      await database?.drop();
    });

    it('answers each of many reads sent at once with its own row', async () => {
      const ids = Array.from({ length: 100 }, (_, i) => i + 1);
      const rows = await Promise.all(ids.map(petById));
      expect(rows).toEqual(ids.map((id) => ({ id: String(id), name: `pet ${id}` })));
    });

    it('fails only the read whose statement fails, not those sent around it', async () => {
      const answers = await Promise.allSettled([
        petById(1),
        reads.query('ratio', 'SELECT 1 / $1::int AS ratio', [0]),
        petById(2),
      ]);
      expect(answers.map(({ status }) => status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((answers[1] as PromiseRejectedResult).reason).toMatchObject({
        message: 'division by zero',
      });
      expect(await petById(3)).toEqual({ id: '3', name: 'pet 3' });
    });

    it("sets its connections up as the pool's: named, asking for generic plans", async () => {
      const [settings] = await reads.query(
        'settings',
        "SELECT current_setting('application_name') AS name, current_setting('plan_cache_mode') AS plans",
        [],
      );
      expect(settings).toEqual({ name: 'animal-store', plans: 'force_generic_plan' });
      expect((await backends()).size).toBe(2);
    });

    it('reads on new connections once the server has ended its own', async () => {
      const ended = await backends();
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [
        [...ended],
      ]);
      // Reads sent before the client hears of it fail with the connection; then they succeed.
      await waitFor(() =>
        petById(4).then(
          () => true,
          () => false,
        ),
      );
      const now = await backends();
      expect([...now].filter((pid) => ended.has(pid))).toEqual([]);
      expect(await Promise.all([5, 6, 7].map(petById))).toEqual(
        [5, 6, 7].map((id) => ({ id: String(id), name: `pet ${id}` })),
      );
    });

    it('closes its connections at shutdown and reads no more', async () => {
      const open = [...(await backends())];
      await reads.onApplicationShutdown();
      await waitFor(
        async () =>
          (
            await admin.query(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)',
              [open],
            )
          ).rows[0].n === 0,
      );
      await expect(petById(1)).rejects.toThrow('database reads are closed');
    });
  },
);
