import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../../src');

/** Every .ts file under `dir`, at any depth. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}
