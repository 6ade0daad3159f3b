import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';

/** The first Node line better-sqlite3 13 (Node-API) runs on; it crashes Node 20. */
const NODE_API_DRIVER_FROM = 22;

/**
 * The better-sqlite3 module for the Node running this process: 13 from Node 22 on, whose binary is
 * built once for Node-API and ships inside the package, so no install compiles it against a Node's
 * headers; on Node 20, 12, installed as `better-sqlite3-node20` (docs/deployment.md, "Node
 * versions"). TypeORM gets it as its `driver`, so its connection and every statement the service
 * prepares come from this module. Required on first use: a PostgreSQL process never loads it.
 */
export function betterSqlite3(): typeof BetterSqlite3 {
  const major = Number(process.versions.node.split('.')[0]);
  const name = major >= NODE_API_DRIVER_FROM ? 'better-sqlite3' : 'better-sqlite3-node20';
  return createRequire(import.meta.url)(name) as typeof BetterSqlite3;
}
