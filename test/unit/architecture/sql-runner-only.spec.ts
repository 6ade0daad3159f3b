import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './source-files.js';

/** TypeORM's own ways of running SQL, each of which bypasses SqlRunner. */
const TYPEORM_QUERY_API: readonly RegExp[] = [
  /@Inject(Repository|EntityManager|DataSource)\b/,
  /\b(getRepository|getTreeRepository|createQueryRunner|createQueryBuilder|onReadNode)\b/,
  /\.manager\b/,
  /\bdataSource\s*\.\s*(query|transaction)\b/i,
  /import[^;]*\b(Repository|EntityManager|QueryRunner|SelectQueryBuilder)\b[^;]*from 'typeorm'/,
];

describe('SQL outside src/database/ (docs/architecture.md, "SQLite")', () => {
  it("runs only through SqlRunner, never through TypeORM's query API", () => {
    const uses = sourceFiles(SRC)
      .filter((file) => !file.startsWith(join(SRC, 'database/')))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return TYPEORM_QUERY_API.flatMap((api) => {
          const match = api.exec(text);
          if (!match) return [];
          const line = text.slice(0, match.index).split('\n').length;
          return [`${relative(SRC, file)}:${line}: ${match[0]}`];
        });
      });
    expect(
      uses,
      'every statement goes through SqlRunner: on SQLite it holds statements back while a ' +
        'transaction is open on the one connection (docs/architecture.md, "SQLite")',
    ).toEqual([]);
  });
});
