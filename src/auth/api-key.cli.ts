import { loadConfig, loadDotEnv } from '../config/app-config.js';
import { dataSourceOptions, openDataSource } from '../database/data-source.js';
import { sqlRunnerFor } from '../database/sql-runner-for.js';
import { parseCanonicalDecimal } from '../http/canonical-decimal.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyStore, type ApiKeySummary, type NewApiKeyOptions } from './api-key-store.js';
import { formatScopes, parseScopes } from './scopes.js';

const USAGE = `usage: npm run --silent apikey -- <command>
  create <name> [--scopes pets:read,pets:write,orders:write,webhooks:manage] [--expires-in <days>d]
                  create a key and print it (shown only once); by default it has
                  pets:read, pets:write and orders:write (not webhooks:manage) and never expires
  list            list keys: id, name, prefix, scopes, created, expires, last used, last deprecated call, revoked, state
  revoke <id>     revoke a key; running servers refuse it within 5 seconds`;

class UsageError extends Error {}

const MAX_EXPIRY_DAYS = 3650;
const MAX_KEY_ID = 2_147_483_647;

async function run(args: string[]): Promise<void> {
  const [command, argument, ...options] = args;
  const needsArgument = command === 'create' || command === 'revoke';
  if (
    !['create', 'list', 'revoke'].includes(command) ||
    needsArgument !== (argument !== undefined) ||
    (command !== 'create' && options.length) ||
    (command === 'create' && argument.startsWith('--'))
  ) {
    throw new UsageError(USAGE);
  }
  const createOptions = command === 'create' ? parseCreateOptions(options) : {};
  loadDotEnv();
  const dataSource = await openDataSource(dataSourceOptions(loadConfig().database, [ApiKeyEntity]));
  try {
    const apiKeys = new ApiKeyStore(sqlRunnerFor(dataSource));
    if (command === 'create') {
      process.stdout.write(`${(await apiKeys.create(argument, createOptions)).key}\n`);
    } else if (command === 'list') {
      process.stdout.write(formatTable(await apiKeys.list()));
    } else {
      await revoke(apiKeys, argument);
    }
  } finally {
    await dataSource.destroy();
  }
}

/** `[--scopes <scope>,…] [--expires-in <days>d]`, each at most once, in any order. */
function parseCreateOptions(options: string[]): NewApiKeyOptions {
  const parsed: NewApiKeyOptions = {};
  for (let i = 0; i < options.length; i += 2) {
    const [option, value] = [options[i], options[i + 1]];
    if (value === undefined) throw new UsageError(`create: ${option} needs a value\n${USAGE}`);
    if (option === '--scopes' && parsed.scopes === undefined) {
      try {
        parsed.scopes = parseScopes(value);
      } catch (error) {
        throw new UsageError(`create: --scopes: ${(error as Error).message}`);
      }
    } else if (option === '--expires-in' && parsed.expiresInDays === undefined) {
      const days = /^([1-9]\d{0,3})d$/.exec(value)?.[1];
      if (days === undefined || Number(days) > MAX_EXPIRY_DAYS) {
        throw new UsageError(
          `create: --expires-in must be whole days from 1d to ${MAX_EXPIRY_DAYS}d (got "${value}")`,
        );
      }
      parsed.expiresInDays = Number(days);
    } else {
      throw new UsageError(`create: unexpected "${option}"\n${USAGE}`);
    }
  }
  return parsed;
}

async function revoke(apiKeys: ApiKeyStore, argument: string): Promise<void> {
  const id = parseCanonicalDecimal(argument) ?? NaN;
  // api_keys.id is a 32-bit serial (src/database/migrations): a larger number names no key.
  if (Number.isNaN(id) || id > MAX_KEY_ID)
    throw new UsageError(`revoke: "${argument}" is not a key id (see: apikey list)`);
  const revoked = await apiKeys.revoke(id);
  if (!revoked) throw new Error(`revoke: no key with id ${id}`);
  process.stdout.write(
    `revoked key ${revoked.id} (${revoked.name}) at ${revoked.revokedAt!.toISOString()}\n`,
  );
}

function formatTable(keys: ApiKeySummary[]): string {
  const now = Date.now();
  const rows = [
    [
      'id',
      'name',
      'prefix',
      'scopes',
      'created',
      'expires',
      'last-used',
      'last-deprecated-call',
      'revoked',
      'state',
    ],
  ].concat(
    keys.map((k) => [
      String(k.id),
      k.name,
      k.prefix,
      formatScopes(k.scopes),
      k.createdAt.toISOString(),
      k.expiresAt?.toISOString() ?? 'never',
      k.lastUsedAt?.toISOString() ?? '-',
      k.lastDeprecatedCallAt?.toISOString() ?? '-',
      k.revokedAt?.toISOString() ?? '-',
      stateOf(k, now),
    ]),
  );
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map(
      (row) =>
        row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd() + '\n',
    )
    .join('');
}

function stateOf(key: ApiKeySummary, now: number): string {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}

run(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
