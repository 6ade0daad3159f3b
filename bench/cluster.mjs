// npm run bench -- --cluster: the service on the production topology of `npm run cluster`
// (docs/deployment.md): list, get and create through HAProxy's HTTP front to two app instances,
// then reads while the primary's machine dies, then the write-unavailability window over several
// kills. There is no reference to race here: these are absolute figures for this machine.
import { execFileSync } from 'node:child_process';
import { runLoad } from './lib/load.mjs';

/** Pets created before list and get run, so every get hits a pet. */
const SEEDED = 2_000;

export async function runClusterBench({ seconds, connections, kills }) {
  try {
    const { url, key } = up();
    const headers = { Authorization: `Bearer ${key}` };
    const load = (request, duration = seconds) =>
      runLoad({ ...request, origin: url, connections, seconds: duration });
    await seed(url, headers);

    const scenarios = {
      list: await load({ method: 'GET', path: '/v1/pets?limit=20', headers }),
      get: await load({ method: 'GET', path: '/v1/pets/{id}', maxId: SEEDED, headers }),
      create: await load({
        method: 'POST',
        path: '/v1/pets',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Bench the beagle', categoryId: 7, status: 'available' }),
      }),
    };
    for (const [name, s] of Object.entries(scenarios))
      process.stderr.write(`  ${name}: ${Math.round(s.rps)}/s, p99 ${s.p99Ms} ms\n`);

    // Reads for 30 s, the primary killed 5 s in: the standby is promoted meanwhile.
    const readsDuringKill = load(
      { method: 'GET', path: '/v1/pets/{id}', maxId: SEEDED, headers },
      30,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    cluster('kill-primary');
    const duringKill = await readsDuringKill;
    process.stderr.write(
      `  reads during the kill: ${duringKill.requests - duringKill.errors} of ${duringKill.requests} served\n`,
    );
    cluster('restart');

    const failover = cluster('measure-failover', String(kills));
    process.stderr.write(`  writes back after a kill: ${failover.windowsMs.join(', ')} ms\n`);
    return { scenarios, readsDuringKill: duringKill, failover };
  } finally {
    cluster('down');
  }
}

/** The topology up with no per-key or per-address limit: one key drives the whole load. */
function up() {
  return cluster('up', {
    env: { ...process.env, RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' },
  });
}

/** Runs `npm run cluster -- <command>` and returns the JSON of its last stdout line. */
function cluster(command, ...rest) {
  const options = typeof rest.at(-1) === 'object' ? rest.pop() : {};
  process.stderr.write(`cluster ${command}…\n`);
  const output = execFileSync(process.execPath, ['scripts/cluster/cluster.mjs', command, ...rest], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    ...options,
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

async function seed(url, headers) {
  for (let i = 0; i < SEEDED; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const response = await fetch(`${url}/v1/pets`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `pet ${i + j + 1}`, categoryId: 1 }),
        });
        if (response.status !== 201) throw new Error(`seeding got ${response.status}`);
      }),
    );
}
