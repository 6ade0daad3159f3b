// Fails CI when the tests carrying a marker in their full name (`[browser]`, `[postgres]`, ...) were
// skipped, empty or failing: such suites skip themselves on a machine that lacks their engine, so
// a green run does not show they ran.
// usage: node .ci/assert-tests-ran.mjs <vitest JSON report> <marker>...
import { readFileSync } from 'node:fs';

const [reportPath, ...markers] = process.argv.slice(2);
if (!reportPath || markers.length === 0) {
  console.error('usage: node .ci/assert-tests-ran.mjs <vitest JSON report> <marker>...');
  process.exit(2);
}

const tests = JSON.parse(readFileSync(reportPath, 'utf8')).testResults.flatMap(
  (file) => file.assertionResults,
);
let failed = false;
for (const marker of markers) {
  const marked = tests.filter((test) => test.fullName.includes(marker));
  const passed = marked.filter((test) => test.status === 'passed').length;
  const notPassed = marked.length - passed;
  if (passed === 0 || notPassed > 0) {
    console.error(
      `${marker} tests: ${passed} passed, ${notPassed} not passed: they must run, and pass, in CI`,
    );
    failed = true;
  } else {
    console.log(`${marker} tests: ${passed} passed`);
  }
}
process.exit(failed ? 1 : 0);
