import { loadConfig, loadDotEnv } from '../config/app-config.js';
import { dataSourceOptions, openDataSource } from '../database/data-source.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeysService, ApiKeySummary } from './api-keys.service.js';

const USAGE = `usage: npm run --silent apikey -- <command>
  create <name>   create a key and print it (shown only once)
  list            list keys: id, name, prefix, created, revoked
  revoke <id>     revoke a key; running servers refuse it within 5 seconds`;

class UsageError extends Error {}

async function run(args: string[]): Promise<void> {
  const [command, argument, ...extra] = args;
  const needsArgument = command === 'create' || command === 'revoke';
  if (
    !['create', 'list', 'revoke'].includes(command) ||
    needsArgument !== (argument !== undefined) ||
    extra.length
  ) {
    throw new UsageError(USAGE);
  }
  loadDotEnv();
  const dataSource = await openDataSource(dataSourceOptions(loadConfig().database));
  try {
    const apiKeys = new ApiKeysService(dataSource.getRepository(ApiKeyEntity));
    if (command === 'create') {
      process.stdout.write(`${(await apiKeys.create(argument)).key}\n`);
    } else if (command === 'list') {
      process.stdout.write(formatTable(await apiKeys.list()));
    } else {
      await revoke(apiKeys, argument);
    }
  } finally {
    await dataSource.destroy();
  }
}

async function revoke(apiKeys: ApiKeysService, argument: string): Promise<void> {
  const id = /^[1-9]\d{0,9}$/.test(argument) ? Number(argument) : NaN;
  if (Number.isNaN(id))
    throw new UsageError(`revoke: "${argument}" is not a key id (see: apikey list)`);
  const revoked = await apiKeys.revoke(id);
  if (!revoked) throw new Error(`revoke: no key with id ${id}`);
  process.stdout.write(
    `revoked key ${revoked.id} (${revoked.name}) at ${revoked.revokedAt!.toISOString()}\n`,
  );
}

function formatTable(keys: ApiKeySummary[]): string {
  const rows = [['id', 'name', 'prefix', 'created', 'revoked']].concat(
    keys.map((k) => [
      String(k.id),
      k.name,
      k.prefix,
      k.createdAt.toISOString(),
      k.revokedAt?.toISOString() ?? '-',
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

run(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
