import type { DataSource } from 'typeorm';

/** Reverts migrations newest first, as an operator rolling back would, until `name` is reverted. */
export async function undoMigrationsThrough(dataSource: DataSource, name: string): Promise<void> {
  for (;;) {
    const [last] = await dataSource.query(
      'SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1',
    );
    if (!last) throw new Error(`migration ${name} was never run`);
    await dataSource.undoLastMigration();
    if (last.name === name) return;
  }
}
