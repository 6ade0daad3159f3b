import type { DataSource } from 'typeorm';
import { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../../src/database/data-source.js';
import type { SqlRunner } from '../../../src/database/sql-runner.js';
import { sqlRunnerFor } from '../../../src/database/sql-runner-for.js';
import { createTestDatabase, type Engine } from '../../support/test-database.js';

export interface KeyDatabase {
  /** The runner the service would use on this database. */
  db: SqlRunner;
  /** For looking at stored rows as they are, outside the code under test. */
  dataSource: DataSource;
  close(): Promise<void>;
}

/** A fresh, migrated database, with ApiKeyEntity's metadata as the server and the CLI have it. */
export async function openKeyDatabase(engine: Engine): Promise<KeyDatabase> {
  const database = await createTestDatabase(engine);
  const dataSource = await openDataSource(
    dataSourceOptions(loadConfig({ DATABASE_URL: database.url }).database, [ApiKeyEntity]),
  );
  return {
    db: sqlRunnerFor(dataSource),
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}
