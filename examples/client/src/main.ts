// Runs the example against a running service. ANIMAL_STORE_API_KEY is required;
// ANIMAL_STORE_URL defaults to the local server that `npm start` runs.
import { AnimalStoreError, explainError, runExample } from './example.js';

const DEFAULT_URL = 'http://127.0.0.1:3000/v1';

const apiKey = process.env.ANIMAL_STORE_API_KEY;
if (!apiKey) {
  console.error(
    'Set ANIMAL_STORE_API_KEY to an API key (npm start prints one on its first start).',
  );
  process.exit(2);
}

try {
  await runExample({
    baseUrl: process.env.ANIMAL_STORE_URL ?? DEFAULT_URL,
    apiKey,
    log: (line) => console.log(line),
  });
} catch (error) {
  if (!(error instanceof AnimalStoreError)) throw error;
  console.error(explainError(error.body));
  process.exitCode = 1;
}
