import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { betterSqlite3 } from '../../../src/database/better-sqlite3.js';
import { inDialect } from '../../../src/database/sql-runner.js';

/** Each engine's TypeORM driver; building a DataSource connects to nothing. */
const postgres = new DataSource({ type: 'postgres', url: 'postgres://localhost/unused' }).driver;
const sqlite = new DataSource({
  type: 'better-sqlite3',
  driver: betterSqlite3(),
  database: ':memory:',
}).driver;

describe('inDialect', () => {
  const sql = 'SELECT * FROM pets WHERE status = :status AND id > :afterId AND id <> :status';
  const parameters = { afterId: 7, status: 'sold' };

  it('numbers the PostgreSQL placeholders by first use, one number per name', () => {
    const statement = inDialect<typeof parameters>(postgres, sql);
    expect(statement.text).toBe('SELECT * FROM pets WHERE status = $1 AND id > $2 AND id <> $1');
    expect(statement.values(parameters)).toEqual(['sold', 7]);
  });

  it('gives SQLite a ? and a value per occurrence, numbers included, in the order they occur', () => {
    const statement = inDialect<typeof parameters>(sqlite, sql);
    expect(statement.text).toBe('SELECT * FROM pets WHERE status = ? AND id > ? AND id <> ?');
    expect(statement.values(parameters)).toEqual(['sold', 7, 'sold']);
  });

  it('keeps the text whatever the values, so the engine prepares it once', () => {
    const statement = inDialect<{ id: number }>(sqlite, 'SELECT name FROM pets WHERE id = :id');
    expect(statement.values({ id: 1 })).toEqual([1]);
    expect(statement.values({ id: 2 })).toEqual([2]);
    expect(statement.text).toBe('SELECT name FROM pets WHERE id = ?');
  });

  it('leaves a PostgreSQL cast alone', () => {
    const statement = inDialect<{ at: string }>(postgres, 'SELECT :at::timestamptz AS at');
    expect(statement.text).toBe('SELECT $1::timestamptz AS at');
    expect(statement.values({ at: '2030-01-01T00:00:00Z' })).toEqual(['2030-01-01T00:00:00Z']);
  });

  it.each([
    ['PostgreSQL', postgres],
    ['SQLite', sqlite],
  ])('passes a statement without parameters through on %s', (_engine, driver) => {
    const statement = inDialect<Record<string, never>>(driver, 'SELECT 1');
    expect(statement.text).toBe('SELECT 1');
    expect(statement.values({})).toEqual([]);
  });
});
