// The better-sqlite3 module the service loads on this Node (src/database/better-sqlite3.ts): the
// seeding and the reference open their databases with it too, and CI checks it loads (.ci/run).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split('.')[0]);
export const DRIVER_PACKAGE = major >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';
export const Database = require(DRIVER_PACKAGE);
export const driverVersion = () => require(`${DRIVER_PACKAGE}/package.json`).version;
