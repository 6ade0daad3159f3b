/** Driver error codes that mean "the database cannot serve now", as opposed to a bad query. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  // read_only_sql_transaction: in a failover, a write that reached a node that is no longer, or
  // not yet, the primary, before the proxy's health check moved the write port.
  '25006',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/**
 * Driver errors without a code. "Client has encountered a connection error and is not queryable"
 * is pg's answer to the next statement on a connection that already failed: a transaction's
 * statement after its database died under it.
 */
const UNAVAILABLE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|driver not connected|encountered a connection error/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = errorCode(error) ?? errorCode((error as { driverError?: unknown }).driverError);
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return UNAVAILABLE_MESSAGES.test(error.message);
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * On a hot standby, a query the replay of the primary's changes had to cancel (a "recovery
 * conflict"): SQLSTATE 40001 on a read-only statement, or 57P04 when the database was dropped.
 */
const RECOVERY_CONFLICT_CODES = new Set(['40001', '57P04']);

/**
 * A read that failed because of the node that served it, not because of the query: the read node is
 * down, starting, stopping, promoting, or replaying over it. The same read on the primary may work.
 */
export function isReadNodeFailure(error: unknown): boolean {
  if (isDatabaseUnavailable(error)) return true;
  if (!(error instanceof Error)) return false;
  const code = errorCode(error) ?? errorCode((error as { driverError?: unknown }).driverError);
  return code !== undefined && RECOVERY_CONFLICT_CODES.has(code);
}

/** PostgreSQL's and SQLite's codes for a row a UNIQUE constraint refused. */
const UNIQUE_VIOLATION_CODES = new Set(['23505', 'SQLITE_CONSTRAINT_UNIQUE']);

/**
 * A write a UNIQUE constraint refused: the database found another row holding the value, which
 * no read before the write can decide safely under concurrent writers.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = errorCode(error) ?? errorCode((error as { driverError?: unknown }).driverError);
  return code !== undefined && UNIQUE_VIOLATION_CODES.has(code);
}
