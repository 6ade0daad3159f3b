// The node arguments `npm start` runs the server with (V8 flags, then dist/main.js), read from
// package.json, so the bench and the cluster harness start the server exactly as production does.
import { readFileSync } from 'node:fs';

export function serverNodeArgs(packageJson = new URL('../package.json', import.meta.url)) {
  const start = JSON.parse(readFileSync(packageJson, 'utf8'))
    .scripts.start.split('&&')
    .pop()
    .trim()
    .split(/\s+/);
  if (start[0] !== 'node')
    throw new Error(`npm start should end with "node …", found: ${start.join(' ')}`);
  return start.slice(1);
}
