import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serverNodeArgs } from '../../../scripts/start-command.mjs';

const dockerfile = readFileSync('Dockerfile', 'utf8');

/** The JSON array of an exec-form instruction such as `CMD ["node", …]`. */
function execForm(instruction: string): unknown {
  const line = dockerfile.split('\n').find((text) => text.startsWith(`${instruction} `));
  return line && JSON.parse(line.slice(instruction.length + 1));
}

describe('Dockerfile', () => {
  it('runs node itself with the flags of npm start, no shell or npm in between', () => {
    expect(execForm('CMD')).toEqual(['node', ...serverNodeArgs()]);
    expect(dockerfile).not.toMatch(/^ENTRYPOINT /m);
  });

  it('builds on the Node 24 image named by a build argument, and runs as a fixed uid', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=docker\.io\/library\/node:24-[\w-]+$/m);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
  });
});
