import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './source-files.js';

/**
 * The floors of docs/architecture.md, top to bottom. A folder imports only folders on lower
 * floors (and itself); folders on one floor do not import each other.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['.'],
  ['pets', 'categories', 'inventory', 'health', 'docs', 'webhooks'],
  ['orders'],
  ['events', 'idempotency'],
  ['deprecation'],
  ['rate-limit'],
  ['auth'],
  ['http'],
  ['errors'],
  ['database'],
  ['metrics', 'telemetry', 'logging'],
  ['config', 'time'],
];

/** The top-level folder under src/ a file belongs to; `.` for the files beside main.ts. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? '.' : parts[0];
}

function floorOf(folder: string): number {
  const floor = FLOORS.findIndex((folders) => folders.includes(folder));
  if (floor === -1) throw new Error(`src/${folder} is on no floor of docs/architecture.md`);
  return floor;
}

/** Every `from './…'` of the file, as `from -> to` folder pairs. */
function importArrows(file: string): { from: string; to: string; line: string }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)].map((match) => ({
    from: folderOf(file),
    to: folderOf(resolve(dirname(file), match[1])),
    line: `${relative(SRC, file)}: ${match[0]}`,
  }));
}

describe('src/ layers (docs/architecture.md)', () => {
  const arrows = sourceFiles(SRC).flatMap(importArrows);

  it('puts every folder on a floor', () => {
    const folders = new Set(arrows.flatMap(({ from, to }) => [from, to]));
    for (const folder of folders) expect(() => floorOf(folder)).not.toThrow();
  });

  it('imports only downward', () => {
    const upward = arrows
      .filter(({ from, to }) => from !== to && floorOf(to) <= floorOf(from))
      .map(({ line }) => line);
    expect(upward).toEqual([]);
  });
});
