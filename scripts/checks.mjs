// npm test's static checks, all at once: the types, the lint, the formatting and the OpenAPI
// document. Each is mostly one thread, so one after another they left a core idle for most of a
// minute. Each check's output is printed whole once it ends; the exit code is 1 if any failed.
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check', 'lint:openapi'];

function run(check) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', check], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      process.stdout.write(output);
      if (code !== 0) process.stderr.write(`npm run ${check} failed (exit code ${code})\n`);
      resolve(code === 0);
    });
  });
}

const passed = await Promise.all(CHECKS.map(run));
process.exitCode = passed.every(Boolean) ? 0 : 1;
