import { execFileSync } from 'node:child_process';

/**
 * Refuses a TEST_DATABASE_URL that does not name a test database (each suite creates and drops
 * databases through it), and builds dist/ (and the server bundle) once for the tests that run the real CLI and server.
 */
export default function setup(): void {
  const url = process.env.TEST_DATABASE_URL;
  if (url && !/test/i.test(new URL(url).pathname)) {
    throw new Error(
      `TEST_DATABASE_URL must point at a database whose name contains "test", got ${new URL(url).pathname}`,
    );
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
