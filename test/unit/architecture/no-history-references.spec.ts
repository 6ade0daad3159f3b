import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A reader of the repository has its files, not the tracker nor the log of who worked when: a
 * pointer names a section of the repository's own docs by its heading, e.g.
 * (docs/performance.md, "SQLite group commit"), and history stays in git.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs', 'README.md'];

/** Ordinals a database or protocol session also takes ("the second one waits for the lock"). */
const PLAIN_ORDINALS = ['first', 'second'];
const ORDINALS = [
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
  'twentieth',
  'twenty-\\w+',
  '\\d+(?:st|nd|rd|th)',
];
const WORK_PERIOD = 'sessions?';

interface Rule {
  pattern: RegExp;
  why: string;
  /** The words have a technical sense too: left alone on a line that talks of connections, locks… */
  alsoTechnical?: boolean;
}

const RULES: readonly Rule[] = [
  {
    pattern: new RegExp(`\\b(?:${ORDINALS.join('|')})[\\s-]+${WORK_PERIOD}\\b`, 'i'),
    why: 'names a work period',
  },
  {
    pattern: new RegExp(
      `\\b(?:${PLAIN_ORDINALS.join('|')})[\\s-]+${WORK_PERIOD}\\b` +
        `|\\b(?:this|last|previous|next|earlier|later|same|that|one)\\s+${WORK_PERIOD}\\b` +
        `|\\b${WORK_PERIOD}\\s+(?:ago|before|after)\\b|\\bbetween\\s+${WORK_PERIOD}\\b`,
      'i',
    ),
    why: 'names a work period',
    alsoTechnical: true,
  },
  { pattern: /\b(?:issues?|pull requests?|PRs?)\s+#?\d+/i, why: 'names an issue number' },
  // A number right after a hash; after `owner/repo` (an upstream project's issue) or `&` (an HTML
  // entity) it is not one of this project's.
  { pattern: /(?<![\w&/.-])#\d+\b/, why: 'names an issue number' },
];

/**
 * Where "session" is the protocol's or the database's word, not a period of work: a line that
 * talks of these is left alone.
 */
const TECHNICAL_SESSION =
  /\b(?:database|postgres\w*|sql\w*|connection|transaction|http|tls|ssl|cookie|browser|tmux|ssh|redis|lock|backend|pgbouncer|pooler|socket|terminal)\b/i;

/** Links are addresses, not pointers into this repository: an upstream issue may be linked. */
const URL = /\bhttps?:\/\/\S+/g;

/**
 * The lines of a file's text that hold a reference, one entry a line with every reason. A phrase
 * broken across two lines ("the tenth" at the end of one, "session" at the start of the next)
 * counts on the line where it starts.
 */
function historyReferences(file: string, text: string): string[] {
  const raw = text.split('\n');
  const lines = raw.map((line) => line.replace(URL, ''));
  return lines.flatMap((prose, index) => {
    const joined = `${prose.trimEnd()} ${lines[index + 1]?.trim() ?? ''}`;
    const starts = (rule: Rule) =>
      [...joined.matchAll(new RegExp(rule.pattern.source, `${rule.pattern.flags}g`))].some(
        (match) => match.index < prose.trimEnd().length,
      );
    const why = RULES.filter(
      (rule) => starts(rule) && !(rule.alsoTechnical && TECHNICAL_SESSION.test(joined)),
    ).map((rule) => rule.why);
    if (why.length === 0) return [];
    const reasons = [...new Set(why)].join(', ');
    return [`${file}:${index + 1}: ${raw[index].trim().slice(0, 140)}  (${reasons})`];
  });
}

/** The tracked files under SCANNED that are text (no NUL byte). */
function trackedTextFiles(): { file: string; text: string }[] {
  const files = execFileSync('git', ['ls-files', '-z', '--', ...SCANNED], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  return files.flatMap((file) => {
    let text: string;
    try {
      text = readFileSync(resolve(ROOT, file), 'utf8');
    } catch {
      return []; // deleted in the working tree, not yet in the index
    }
    return text.includes('\0') ? [] : [{ file, text }];
  });
}

describe('history references (no work periods, no issue numbers)', () => {
  // The phrases are assembled from parts so that this file does not hold them.
  const said = (...words: string[]) => historyReferences('x.md', words.join(' '));
  const hash = '#';

  it('finds a work period named by its ordinal, by "this" or "last", and pointers to one', () => {
    expect(said('in the', 'fifth', 'session')).toHaveLength(1);
    expect(said('the', '17th', 'session', 'measured it')).toHaveLength(1);
    expect(said('measured', 'this', 'session')).toHaveLength(1);
    expect(said('as the', 'last', 'session', 'found')).toHaveLength(1);
    expect(said('(docs/performance.md, "tenth', 'session")')).toHaveLength(1);
    expect(historyReferences('x.md', ['as the twelfth', '  session measured'].join('\n'))).toEqual([
      'x.md:1: as the twelfth  (names a work period)',
    ]);
    expect(said('## 2026-11-25,', 'sixth', 'session: the event write')).toHaveLength(1);
    expect(said('the', 'seventh', 'session', "measured the transaction's lock")).toHaveLength(1);
  });

  it('finds issue numbers', () => {
    expect(said('the follower line of', 'issue', '25')).toHaveLength(1);
    expect(said('see', 'issue', `${hash}25`)).toHaveLength(1);
    expect(said('after', 'issues', '13, 14 and 15')).toHaveLength(1);
    expect(said(`closed by ${hash}25`)).toHaveLength(1);
  });

  it('leaves protocol and database sessions, RFCs, CVEs and upstream links alone', () => {
    expect(said('each browser context is an isolated', 'session')).toEqual([]);
    expect(said('the second', 'session', 'waits for the row lock')).toEqual([]);
    expect(said('PgBouncer in', 'session', 'mode')).toEqual([]);
    expect(said('const', 'session', '= await client.startSession();')).toEqual([]);
    expect(said('RFC 7396 and RFC 9745; CVE-2024-12345')).toEqual([]);
    expect(said('[nodejs/node#65446](https://github.com/nodejs/node/issues/65446)')).toEqual([]);
    expect(said('&#8212; an entity, and page.html#section-2')).toEqual([]);
  });

  it('no tracked file of src/, test/, bench/, scripts/, docs/ or README.md has one', () => {
    const hits = trackedTextFiles().flatMap(({ file, text }) => historyReferences(file, text));
    expect(
      hits,
      'a pointer names a docs/ section by its heading, e.g. (docs/performance.md, "SQLite group ' +
        'commit"); history stays in git (docs/testing.md, "What the suites prove")',
    ).toEqual([]);
  });
});
