import type { Database } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config.js';
import { betterSqlite3 } from './better-sqlite3.js';
import { InitialSchema1795219200000 } from './migrations/1795219200000-initial-schema.js';
import { IdempotencyKeys1795298400000 } from './migrations/1795298400000-idempotency-keys.js';
import { IdempotencyKeysTable1795400000000 } from './migrations/1795400000000-idempotency-keys-table.js';
import { ApiKeyScopesExpiry1795500000000 } from './migrations/1795500000000-api-key-scopes-expiry.js';
import { ApiKeyDeprecatedCalls1795600000000 } from './migrations/1795600000000-api-key-deprecated-calls.js';
import { PetRevision1795700000000 } from './migrations/1795700000000-pet-revision.js';
import { PetEvents1795800000000 } from './migrations/1795800000000-pet-events.js';
import { LeanPetEvents1795900000000 } from './migrations/1795900000000-lean-pet-events.js';
import { Webhooks1796000000000 } from './migrations/1796000000000-webhooks.js';
import { IdempotencyResponses1796100000000 } from './migrations/1796100000000-idempotency-responses.js';
import { Categories1796200000000 } from './migrations/1796200000000-categories.js';
import { PetsByCategory1796300000000 } from './migrations/1796300000000-pets-by-category.js';
import { PetHolds1796400000000 } from './migrations/1796400000000-pet-holds.js';
import { PetCounts1796500000000 } from './migrations/1796500000000-pet-counts.js';
import { ClaimsOutlivePets1796600000000 } from './migrations/1796600000000-claims-outlive-pets.js';
import { Orders1797000000000 } from './migrations/1797000000000-orders.js';
import { DropPetHolds1797100000000 } from './migrations/1797100000000-drop-pet-holds.js';

/** Any 64-bit constant shared by every replica: serialises migrations across processes. */
const MIGRATION_LOCK_ID = 7_413_202_611;

const APPLICATION_NAME = 'animal-store';
const CONNECT_TIMEOUT_MS = 5000;
/**
 * Every statement is a constant text with an index to follow, so one plan per connection serves
 * every run; left to choose, PostgreSQL plans a `LIMIT` parameter's page anew each run
 * (docs/performance.md, "PostgreSQL's generic plans").
 */
const SESSION_OPTIONS = '-c plan_cache_mode=force_generic_plan';

/** A connection to `url` outside the pool, set up as the pool's are (pipelined-reads.ts). */
export function postgresClientConfig(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    options: SESSION_OPTIONS,
  };
}

/**
 * The one data source definition, shared by the server and the `apikey` CLI. The schema is the
 * migrations'; `entities` are the classes whose column metadata the caller converts values with
 * (src/auth/api-key-rows.ts; the server's come from each feature module's
 * `TypeOrmModule.forFeature`).
 */
export function dataSourceOptions(
  database: DatabaseConfig,
  entities: DataSourceOptions['entities'] = [],
): DataSourceOptions {
  const common = {
    entities,
    migrations: [
      InitialSchema1795219200000,
      IdempotencyKeys1795298400000,
      IdempotencyKeysTable1795400000000,
      ApiKeyScopesExpiry1795500000000,
      ApiKeyDeprecatedCalls1795600000000,
      PetRevision1795700000000,
      PetEvents1795800000000,
      LeanPetEvents1795900000000,
      Webhooks1796000000000,
      IdempotencyResponses1796100000000,
      Categories1796200000000,
      PetsByCategory1796300000000,
      PetHolds1796400000000,
      PetCounts1796500000000,
      ClaimsOutlivePets1796600000000,
      Orders1797000000000,
      DropPetHolds1797100000000,
    ],
    migrationsTableName: 'migrations',
    synchronize: false,
    logging: false,
  };
  if (database.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: database.url,
      applicationName: APPLICATION_NAME,
      connectTimeoutMS: CONNECT_TIMEOUT_MS,
      poolSize: 10,
      extra: { options: SESSION_OPTIONS },
      ...(database.readUrl && {
        // Only PostgresSqlRunner.read asks for the read node (and falls back to the primary when
        // it fails); everything else, migrations and TypeORM's own SELECTs included, stays on the
        // primary: defaultMode 'master'.
        replication: {
          master: { url: database.url },
          slaves: [{ url: database.readUrl }],
          defaultMode: 'master',
        },
      }),
    };
  }
  return {
    ...common,
    type: 'better-sqlite3',
    driver: betterSqlite3(),
    database: database.path,
    enableWAL: true,
    // How long a writer waits for another process's write lock before SQLITE_BUSY.
    timeout: 5000,
  };
}

/** The better-sqlite3 connection under each SQLite data source this process opened. */
const sqliteConnections = new WeakMap<DataSource, Database>();

/**
 * The better-sqlite3 connection TypeORM opened for this data source, handed over by TypeORM's
 * documented `prepareDatabase` option: `SqliteSqlRunner` runs the service's statements on it.
 */
export function sqliteConnectionOf(dataSource: DataSource): Database {
  const connection = sqliteConnections.get(dataSource);
  if (!connection) throw new Error('not a SQLite data source opened by openDataSource()');
  return connection;
}

/** Connects and brings the schema up to date; on PostgreSQL one process migrates at a time. */
export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openAndMigrate(options);
    } catch (error) {
      if (attempt === SQLITE_OPEN_ATTEMPTS || !isSqliteBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

/**
 * Processes that open one new SQLite file at the same instant can find it locked in ways the busy
 * timeout does not wait out (switching it to WAL, say); a few more tries settle it, since one of
 * them has migrated it meanwhile.
 */
const SQLITE_OPEN_ATTEMPTS = 5;

function isSqliteBusy(error: unknown): boolean {
  const { code, driverError } = error as { code?: unknown; driverError?: { code?: unknown } };
  return code === 'SQLITE_BUSY' || driverError?.code === 'SQLITE_BUSY';
}

async function openAndMigrate(options: DataSourceOptions): Promise<DataSource> {
  let dataSource: DataSource;
  if (options.type === 'better-sqlite3') {
    if (options.database !== ':memory:') mkdirSync(dirname(options.database), { recursive: true });
    const prepareDatabase = (connection: Database) => {
      sqliteConnections.set(dataSource, connection);
    };
    dataSource = new DataSource({ ...options, prepareDatabase });
  } else {
    dataSource = new DataSource(options);
  }
  await dataSource.initialize();
  try {
    await migrate(dataSource);
    return dataSource;
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
}

async function migrate(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type === 'postgres') await migrateUnderAdvisoryLock(dataSource);
  else await migrateUnderWriteLock(dataSource);
}

/**
 * Processes starting together on a new SQLite file would each create the schema and all but one
 * fail. BEGIN IMMEDIATE takes the write lock before TypeORM reads which migrations ran, so the next
 * process finds them done, and the run is all-or-nothing.
 */
async function migrateUnderWriteLock(dataSource: DataSource): Promise<void> {
  await dataSource.query('BEGIN IMMEDIATE');
  try {
    await dataSource.runMigrations({ transaction: 'none' });
    await dataSource.query('COMMIT');
  } catch (error) {
    await dataSource.query('ROLLBACK');
    throw error;
  }
}

async function migrateUnderAdvisoryLock(dataSource: DataSource): Promise<void> {
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  try {
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await dataSource.runMigrations({ transaction: 'all' });
  } finally {
    await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    await lockHolder.release();
  }
}
