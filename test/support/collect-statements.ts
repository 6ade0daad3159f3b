// Prepares SQLite statements through the service's driver, as the service and TypeORM do, drops
// them, and lets the garbage collector free them while the heap grows. A better-sqlite3 12 compiled
// against the headers of Node 24.19–24.21 aborts the process there (docs/deployment.md, "Node
// versions"). Prints "alive" and exits 0 when the process survives.
// Runs as a process of its own with --expose-gc, bundled by global-setup.ts.
import 'reflect-metadata';
import { betterSqlite3 } from '../../src/database/better-sqlite3.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with --expose-gc');

/**
 * Allocates and drops tens of megabytes, as a busy server does all day, then collects everything.
 * The collections the allocation sets off free the statements: an explicit gc() alone lets the
 * broken build live.
 */
function allocateAndCollect(): void {
  for (let round = 0; round < 10; round++) {
    const garbage: unknown[] = [];
    for (let i = 0; i < 100_000; i++) garbage.push({ i, text: `row ${i}` });
  }
  collect!();
}

// TypeORM's start: initialize() and the migrations prepare statements and let them go.
const dataSource = await openDataSource(dataSourceOptions({ type: 'sqlite', path: ':memory:' }));
const connection = new (betterSqlite3())(':memory:');
for (let round = 0; round < 20; round++) {
  await dataSource.query('SELECT COUNT(*) AS n FROM pets');
  connection.pragma('journal_mode');
  connection.pragma('foreign_keys');
  for (let i = 0; i < 100; i++) connection.prepare(`SELECT ${round * 100 + i} AS n`).get();
  allocateAndCollect();
}
await dataSource.destroy();
connection.close();
allocateAndCollect();
process.stdout.write('alive\n');
