// Prepares the data a run starts from: a migrated database with N pets, optionally a change feed of
// M events about them and open orders of some of them, and one API key created through the
// service's own key store (the `apikey` CLI), so both contenders verify a real hashed key.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from './better-sqlite3.mjs';
import pg from 'pg';

const STATUS_OF_ROW = `CASE i % 4 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' WHEN 2 THEN 'sold' END`;
/** The longest hold createOrder takes (holdSeconds 86400): no seeded order lapses in a run. */
const HOLD_MS = 86_400_000;

/**
 * The pets' rows: pet i is `pet <i>` in category 1 + i % 100, its status i % 4 but for the pools
 * of the order scenarios: `availablePets` available, and the pets of `openOrders` pending at
 * revision 2, as createOrder leaves a pet it holds. `numbers` is the engine's `n(i)`.
 */
function insertPets(numbers, { availablePets, openOrders }) {
  const within = (first, count) => `i BETWEEN ${first} AND ${first + count - 1}`;
  const held = within(openOrders.firstPetId, openOrders.count);
  return `
    WITH ${numbers}
    INSERT INTO pets (name, category_id, status, revision)
    SELECT 'pet ' || i, 1 + i % 100,
      CASE WHEN ${within(availablePets.firstId, availablePets.count)} THEN 'available'
        WHEN ${held} THEN 'pending' ELSE ${STATUS_OF_ROW} END,
      CASE WHEN ${held} THEN 2 ELSE 1 END
    FROM n`;
}

/**
 * completeOrder's open orders, order k (from 1, on an empty table) holding pet firstPetId + k − 1,
 * as createOrder stores them: open, placed now, held for a day.
 */
function insertOpenOrders({ firstPetId, count }) {
  const now = Date.now();
  const instant = (ms) => `'${new Date(ms).toISOString()}'`;
  return `
    INSERT INTO orders (pet_id, status, created_at, expires_at)
    SELECT id, 'open', ${instant(now)}, ${instant(now + HOLD_MS)} FROM pets
    WHERE id BETWEEN ${firstPetId} AND ${firstPetId + count - 1} ORDER BY id`;
}

/**
 * Writes `events` rows of `pet_events` about the first `rows` pets, as PetEventsRepository.append
 * writes them (docs/events.md, "Events"): event i is about pet 1 + (i - 1) % rows, its creation on
 * the first pass over the pets and a change of its category on each later pass, all committed now.
 * `numbers` is the engine's `n(i)` from 1 to `events`. Only integers and an ISO time go into the
 * text, so it needs no parameters, whose syntax differs between the engines.
 */
function insertEvents(numbers, { rows }) {
  return `
    WITH ${numbers}
    INSERT INTO pet_events (type, occurred_at, pet_id, pet, previous)
    SELECT CASE WHEN n.i <= ${rows} THEN 'pet.created' ELSE 'pet.updated' END,
      '${new Date().toISOString()}', p.id,
      '{"id":' || p.id || ',"name":"' || p.name || '","categoryId":' || p.category_id ||
        CASE WHEN p.status IS NULL THEN '' ELSE ',"status":"' || p.status || '"' END || '}',
      CASE WHEN n.i <= ${rows} THEN NULL ELSE '{"categoryId":' || (1 + p.category_id % 100) || '}' END
    FROM n JOIN pets p ON p.id = 1 + (n.i - 1) % ${rows}
    ORDER BY n.i`;
}

/** Names categories 1 to `categories`, `category <id>`, from the engine's `n(i)`. */
function insertCategories(numbers) {
  return `WITH ${numbers} INSERT INTO categories (id, name) SELECT i, 'category ' || i FROM n`;
}

/** Changes made to the pets from id $1 to $2: each bumped its pet's revision, which starts at 1. */
const REVISIONS_MADE =
  'SELECT COALESCE(SUM(revision - 1), 0) AS made FROM pets WHERE id BETWEEN $1 AND $2';

/** No pool of the order scenarios. */
const NO_PETS = { firstId: 1, count: 0 };
const NO_ORDERS = { firstPetId: 1, count: 0 };

/**
 * A seeded SQLite file that every server start copies, so each contender begins from the same
 * bytes. `events` (default none) are written about the first `eventPets` pets; `categories`
 * (default none) are named; `availablePets` ({ firstId, count }) are available and `openOrders`
 * ({ firstPetId, count }) are placed (default none).
 */
export function prepareSqlite({
  dir,
  rows,
  events = 0,
  eventPets = rows,
  categories = 0,
  availablePets = NO_PETS,
  openOrders = NO_ORDERS,
  scopes,
}) {
  const template = join(dir, 'seed.sqlite');
  const key = createKey(`sqlite:${template}`, scopes);
  const db = new Database(template);
  db.exec(
    insertPets(`RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})`, {
      availablePets,
      openOrders,
    }),
  );
  if (openOrders.count > 0) db.exec(insertOpenOrders(openOrders));
  if (events > 0)
    db.exec(
      insertEvents(
        `RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${events})`,
        { rows: eventPets },
      ),
    );
  if (categories > 0)
    db.exec(
      insertCategories(
        `RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${categories})`,
      ),
    );
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();

  let copies = 0;
  return {
    key,
    /** A fresh copy of the seeded file for one server start. */
    freshCopy() {
      const path = join(dir, `run-${++copies}.sqlite`);
      copyFileSync(template, path);
      return path;
    },
    discard(path) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    },
    /** How many changes were made to the pool of pets at `path`, once its server has stopped. */
    async revisionsMade({ firstId, count }, path) {
      const copy = new Database(path, { fileMustExist: true });
      try {
        const made = copy.prepare(REVISIONS_MADE.replace(/\$\d/g, '?')).pluck();
        return made.get(firstId, firstId + count - 1);
      } finally {
        copy.close();
      }
    },
  };
}

/**
 * Empties a dedicated PostgreSQL database (its name must contain "bench") and seeds it as
 * prepareSqlite does.
 */
export async function preparePostgres({
  url,
  rows,
  events = 0,
  eventPets = rows,
  categories = 0,
  availablePets = NO_PETS,
  openOrders = NO_ORDERS,
  scopes,
}) {
  const name = new URL(url).pathname.slice(1);
  if (!name.includes('bench'))
    throw new Error(
      `--pg: refusing to wipe database "${name}"; use one whose name contains "bench"`,
    );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const key = createKey(url, scopes); // migrates the empty schema first
    await client.query(
      insertPets(`n(i) AS (SELECT generate_series(1, ${rows}))`, { availablePets, openOrders }),
    );
    await client.query('VACUUM ANALYZE pets');
    if (openOrders.count > 0) {
      await client.query(insertOpenOrders(openOrders));
      await client.query('VACUUM ANALYZE orders');
    }
    if (events > 0) {
      await client.query(
        insertEvents(`n(i) AS (SELECT generate_series(1, ${events}))`, { rows: eventPets }),
      );
      await client.query('VACUUM ANALYZE pet_events');
    }
    if (categories > 0) {
      await client.query(insertCategories(`n(i) AS (SELECT generate_series(1, ${categories}))`));
      await client.query('VACUUM ANALYZE categories');
    }
    return {
      key,
      /** On the seeded database, or on `copy`, a copyPostgres of it. */
      revisionsMade: (pool, copy = url) => revisionsMadeOnPostgres(copy, pool),
    };
  } finally {
    await client.end();
  }
}

async function revisionsMadeOnPostgres(url, { firstId, count }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(REVISIONS_MADE, [firstId, firstId + count - 1]);
    return Number(rows[0].made);
  } finally {
    await client.end();
  }
}

/**
 * A copy of the seeded PostgreSQL database at `url`, named after it with `suffix`, made anew: for a
 * contender whose writes must not reach the other's (--webhooks' subscriptions).
 */
export async function copyPostgres(url, suffix) {
  const source = new URL(url);
  const name = `${source.pathname.slice(1)}${suffix}`;
  const server = new pg.Client({
    connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).href,
  });
  await server.connect();
  try {
    await server.query(`DROP DATABASE IF EXISTS "${name}"`);
    await server.query(`CREATE DATABASE "${name}" TEMPLATE "${source.pathname.slice(1)}"`);
  } finally {
    await server.end();
  }
  return Object.assign(source, { pathname: `/${name}` }).href;
}

/** A key made by the `apikey` CLI: the default scopes, or `scopes` (comma-separated). */
function createKey(databaseUrl, scopes) {
  const scopeArgs = scopes ? ['--scopes', scopes] : [];
  const output = execFileSync(
    process.execPath,
    ['dist/api-key.cli.js', 'create', 'bench', ...scopeArgs],
    {
      env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    },
  );
  return output.trim();
}
