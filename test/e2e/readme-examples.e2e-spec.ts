import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { startTestApp, TestClock, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

interface Example {
  command: string;
  /** What the command must print; undefined when the README shows no output for it. */
  output?: string;
  /** The instant the server's clock must show, for an example of what happens at a date. */
  clock?: string;
}

/**
 * The `sh` blocks of the README's consumer sections, as command / expected-output pairs: a `# `
 * line right after a command is what it prints. Variable assignments are the reader's setup; the
 * test provides API, KEY and the server's DATABASE_URL itself.
 */
function readmeExamples(): Example[] {
  const readme = readFileSync('README.md', 'utf8');
  const consumerSections = readme.slice(
    readme.indexOf('## Using the API'),
    readme.indexOf('## Running on PostgreSQL'),
  );
  const examples: Example[] = [];
  // `<!-- readme-examples: clock <instant> -->` right before a block runs it against a server
  // whose clock shows that instant (what happens at a date: the getPet sunset).
  const blocks = /(?:<!-- readme-examples: clock (\S+) -->\n\n?)?```sh\n([\s\S]*?)```/g;
  for (const [, clock, block] of consumerSections.matchAll(blocks)) {
    const lines = block.trimEnd().split('\n');
    for (let i = 0; i < lines.length; i++) {
      let command = lines[i];
      while (command.endsWith('\\')) command = `${command.slice(0, -1)}${lines[++i].trim()}`;
      if (/^[A-Z]+=/.test(command)) continue;
      const output: string[] = [];
      while (lines[i + 1]?.startsWith('# ')) output.push(lines[++i].slice(2));
      examples.push({ command, output: output.length ? output.join('\n') : undefined, clock });
    }
  }
  return examples;
}

const examples = readmeExamples();

describe('README examples, run as written against the real server', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let env: NodeJS.ProcessEnv;
  /** For the examples of a date (the getPet sunset): the real app with its Clock set to it. */
  const clock = new TestClock();
  let dated: TestApp | undefined;
  let datedEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    server = await startServer({ NODE_ENV: 'production', DATABASE_URL: database.url });
    const key = (await runApiKeyCli(['create', 'readme'], database.url)).stdout.trim();
    // The server's environment, which the README runs the key CLI with.
    env = { ...process.env, API: `${server.baseUrl}/v1`, KEY: key, DATABASE_URL: database.url };
    if (examples.some((example) => example.clock !== undefined)) {
      dated = await startTestApp('sqlite', {}, { clock });
      await dated.app.listen(0, '127.0.0.1');
      datedEnv = { ...process.env, API: `${await dated.app.getUrl()}/v1`, KEY: dated.key };
    }
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await database?.drop();
    await dated?.close();
  });

  it('finds the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(14);
    expect(examples.filter((example) => example.clock !== undefined)).not.toEqual([]);
  });

  it.each(examples.map((example, i) => [i + 1, example.command, example] as const))(
    '%i. %s',
    async (_n, _command, example) => {
      if (example.clock !== undefined) clock.setTo(new Date(example.clock));
      const { stdout } = await promisify(execFile)('bash', ['-c', example.command], {
        env: example.clock === undefined ? env : datedEnv,
      });
      if (example.output !== undefined) expect(stdout.trimEnd()).toBe(example.output);
    },
  );
});
