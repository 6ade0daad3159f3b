// Opens DATABASE_URL (which runs the migrations, as the server and the CLI do at start) at the
// wall-clock millisecond given as the first argument, so that several processes start migrating
// at the same instant. Prints "migrated" and exits 0, or prints the error and exits 1.
// Runs as a process of its own, bundled by global-setup.ts.
import 'reflect-metadata';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, openDataSource } from '../../src/database/data-source.js';

const at = Number(process.argv[2]);
const config = loadConfig();
await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
try {
  const dataSource = await openDataSource(dataSourceOptions(config.database));
  await dataSource.destroy();
  process.stdout.write('migrated\n');
} catch (error) {
  process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
