// Prepares the data a run starts from: a migrated database with N pets, optionally a change feed of
// M events about them, and one API key created through the service's own key store (the `apikey`
// CLI), so both contenders verify a real hashed key.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from './better-sqlite3.mjs';
import pg from 'pg';

const STATUS_OF_ROW = `CASE i % 4 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' WHEN 2 THEN 'sold' END`;

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

/** Changes made to the pets from id $1 to $2: each bumped its pet's revision, which starts at 1. */
const REVISIONS_MADE =
  'SELECT COALESCE(SUM(revision - 1), 0) AS made FROM pets WHERE id BETWEEN $1 AND $2';

/**
 * A seeded SQLite file that every server start copies, so each contender begins from the same
 * bytes. `events` (default none) are written about the first `eventPets` pets.
 */
export function prepareSqlite({ dir, rows, events = 0, eventPets = rows, scopes }) {
  const template = join(dir, 'seed.sqlite');
  const key = createKey(`sqlite:${template}`, scopes);
  const db = new Database(template);
  db.prepare(
    `
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO pets (name, category_id, status) SELECT 'pet ' || i, 1 + i % 100, ${STATUS_OF_ROW} FROM n`,
  ).run(rows);
  if (events > 0)
    db.exec(
      insertEvents(
        `RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${events})`,
        { rows: eventPets },
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
export async function preparePostgres({ url, rows, events = 0, eventPets = rows, scopes }) {
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
      `
      INSERT INTO pets (name, category_id, status)
      SELECT 'pet ' || i, 1 + i % 100, ${STATUS_OF_ROW} FROM generate_series(1, $1) AS i`,
      [rows],
    );
    await client.query('VACUUM ANALYZE pets');
    if (events > 0) {
      await client.query(
        insertEvents(`n(i) AS (SELECT generate_series(1, ${events}))`, { rows: eventPets }),
      );
      await client.query('VACUUM ANALYZE pet_events');
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
