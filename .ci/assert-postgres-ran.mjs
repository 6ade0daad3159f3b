// Fails CI when the PostgreSQL e2e suite was skipped or empty: a green run on SQLite alone proves
// nothing about the production engine.
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const postgres = report.testResults
  .flatMap((file) => file.assertionResults)
  .filter((test) => test.fullName.includes('[postgres]'));
const passed = postgres.filter((test) => test.status === 'passed').length;
const notPassed = postgres.length - passed;

if (passed === 0 || notPassed > 0) {
  console.error(
    `PostgreSQL suite: ${passed} passed, ${notPassed} not passed: it must run, and pass, in CI`,
  );
  process.exit(1);
}
console.log(`PostgreSQL suite: ${passed} tests passed`);
