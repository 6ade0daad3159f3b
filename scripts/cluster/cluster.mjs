// npm run cluster -- up|status|kill-primary|switchover|kill-app|restart|measure-failover|down
//
// The production topology on this machine as plain processes on loopback: etcd, two PostgreSQL 15
// nodes under Patroni with synchronous replication, HAProxy (write port, read port, HTTP front),
// Redis and two app instances from the production build. Everything lives under .cluster/
// (git-ignored) or $CLUSTER_DIR. Progress goes to stderr; each command prints one JSON object as its
// last stdout line. docs/deployment.md describes the topology.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  freePorts,
  httpStatus,
  isAlive,
  redisPing,
  signal,
  startDetached,
  stopProcesses,
  userIds,
  waitFor,
  withDescendants,
} from './processes.mjs';
import { serverNodeArgs } from '../start-command.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** CLUSTER_DIR: somewhere else than .cluster/ (the e2e tests use a temporary directory). */
const HOME = process.env.CLUSTER_DIR ? resolve(process.env.CLUSTER_DIR) : join(ROOT, '.cluster');
const STATE = join(HOME, 'state.json');
const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';
const DATABASE = 'animal_store';
const NODES = ['node1', 'node2'];
const APPS = ['app1', 'app2'];
/** Debian package for each program the topology runs. */
const PACKAGES = {
  patroni: 'patroni',
  etcd: 'etcd-server',
  haproxy: 'haproxy',
  [join(PG_BIN_DIR, 'postgres')]: 'postgresql',
  'redis-server': 'redis-server',
};

const log = (message) => process.stderr.write(`[cluster] ${message}\n`);
const print = (object) => process.stdout.write(`${JSON.stringify(object)}\n`);

function readState() {
  if (!existsSync(STATE)) throw new Error('no cluster is up (run: npm run cluster -- up)');
  return JSON.parse(readFileSync(STATE, 'utf8'));
}
const writeState = (state) => writeFileSync(STATE, `${JSON.stringify(state, null, 2)}\n`);

function render(template, values) {
  const text = readFileSync(join(ROOT, 'deploy', template), 'utf8');
  return text.replace(/\{\{(\w+)\}\}/g, (_, name) => {
    if (!(name in values)) throw new Error(`deploy/${template}: no value for {{${name}}}`);
    return values[name];
  });
}

function installMissingPackages() {
  const onPath = (program) =>
    program.startsWith('/')
      ? existsSync(program)
      : spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
  const missing = Object.entries(PACKAGES)
    .filter(([program]) => !onPath(program))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  log(`installing ${missing.join(', ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 2, 2], env });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: ['ignore', 2, 2], env });
}

// ---------------------------------------------------------------------------------------------

async function up() {
  if (existsSync(STATE)) throw new Error('a cluster is already up (npm run cluster -- down first)');
  installMissingPackages();
  log('building the app (scripts/build.mjs --if-stale)');
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
  });
  rmSync(HOME, { recursive: true, force: true });
  mkdirSync(HOME, { recursive: true });
  // PostgreSQL and Patroni run as postgres: they must reach their node directories.
  chmodSync(HOME, 0o755);
  const postgresUser = userIds('postgres');

  const [etcdClient, etcdPeer, write, read, http, redis, ...more] = await freePorts(6 + 2 * 2 + 2);
  const state = {
    startedAt: new Date().toISOString(),
    ports: { etcdClient, etcdPeer, write, read, http, redis },
    nodes: NODES.map((name, index) => ({
      name,
      pgPort: more[index * 2],
      restPort: more[index * 2 + 1],
      dir: join(HOME, name),
    })),
    apps: APPS.map((name, index) => ({ name, port: more[4 + index] })),
    pids: {},
  };
  writeState(state);

  log(`etcd on 127.0.0.1:${etcdClient}`);
  state.pids.etcd = startDetached(
    'etcd',
    [
      '--name=etcd1',
      `--data-dir=${join(HOME, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=etcd1=http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster-state=new',
    ],
    { log: join(HOME, 'etcd.log') },
  );
  writeState(state);
  await waitFor(
    'etcd',
    async () => (await httpStatus(`http://127.0.0.1:${etcdClient}/health`)) === 200,
  );

  // One node first: it bootstraps (initdb) and becomes primary; the second clones it.
  for (const node of state.nodes) {
    startNode(state, node, postgresUser);
    writeState(state);
    const endpoint = node === state.nodes[0] ? 'primary' : 'sync';
    log(`${node.name}: PostgreSQL on 127.0.0.1:${node.pgPort}, Patroni on :${node.restPort}`);
    await waitFor(
      `${node.name} to answer /${endpoint}`,
      async () => (await httpStatus(`http://127.0.0.1:${node.restPort}/${endpoint}`)) === 200,
      { timeoutMs: 120_000 },
    );
  }

  log(`redis on 127.0.0.1:${redis}`);
  state.pids.redis = startDetached(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(redis),
      '--dir',
      HOME,
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { log: join(HOME, 'redis.log') },
  );
  writeState(state);
  await waitFor('redis', () => redisPing(redis));

  const haproxyConfig = join(HOME, 'haproxy.cfg');
  const server = (node) =>
    `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`;
  writeFileSync(
    haproxyConfig,
    render('haproxy.cfg', {
      WRITE_PORT: write,
      READ_PORT: read,
      HTTP_PORT: http,
      WRITE_SERVERS: state.nodes.map(server).join('\n'),
      READ_SERVERS: state.nodes.map(server).join('\n'),
      APP_SERVERS: state.apps
        .map((app) => `  server ${app.name} 127.0.0.1:${app.port} check`)
        .join('\n'),
    }),
  );
  execFileSync('haproxy', ['-c', '-q', '-f', haproxyConfig], { stdio: ['ignore', 2, 2] });
  log(`haproxy: writes :${write}, reads :${read}, API :${http}`);
  state.pids.haproxy = startDetached('haproxy', ['-db', '-f', haproxyConfig], {
    log: join(HOME, 'haproxy.log'),
  });
  writeState(state);

  const writeUrl = `postgres://postgres@127.0.0.1:${write}/${DATABASE}`;
  const readUrl = `postgres://postgres@127.0.0.1:${read}/${DATABASE}`;
  await waitFor('the write port to reach the primary', () =>
    query(`postgres://postgres@127.0.0.1:${write}/postgres`, 'SELECT 1').then(() => true),
  );
  await query(`postgres://postgres@127.0.0.1:${write}/postgres`, `CREATE DATABASE ${DATABASE}`);

  // Migrations run once, before any app instance starts (docs/deployment.md): the CLI applies them
  // under the advisory lock, then creates the key.
  log('migrating and creating an API key');
  const key = execFileSync(
    process.execPath,
    ['dist/api-key.cli.js', 'create', `cluster-${Date.now()}`],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: writeUrl },
      stdio: ['ignore', 'pipe', 2],
    },
  ).trim();

  const appEnv = {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: writeUrl,
    DATABASE_READ_URL: readUrl,
    REDIS_URL: `redis://127.0.0.1:${redis}`,
  };
  state.urls = { write: writeUrl, read: readUrl, redis: appEnv.REDIS_URL };
  state.appEnv = appEnv;
  for (const app of state.apps) startApp(state, app);
  writeState(state);
  for (const app of state.apps) {
    await waitFor(`${app.name} to be ready`, async () => {
      if (!isAlive(state.pids[app.name])) {
        throw new Error(`${app.name} exited; see ${join(HOME, `${app.name}.log`)}`);
      }
      return (await httpStatus(`http://127.0.0.1:${app.port}/health/ready`)) === 200;
    });
  }
  const url = `http://127.0.0.1:${http}`;
  await waitFor(
    'HAProxy to route to the apps',
    async () => (await httpStatus(`${url}/health/ready`)) === 200,
  );
  state.url = url;
  writeState(state);
  log('up');
  return { url, key };
}

function startNode(state, node, postgresUser) {
  mkdirSync(node.dir, { recursive: true, mode: 0o700 });
  chownSync(node.dir, postgresUser.uid, postgresUser.gid);
  const config = join(node.dir, 'patroni.yml');
  writeFileSync(
    config,
    render('patroni.yml', {
      NODE_NAME: node.name,
      NODE_DIR: node.dir,
      REST_PORT: node.restPort,
      PG_PORT: node.pgPort,
      PG_BIN_DIR,
      ETCD_HOSTS: `127.0.0.1:${state.ports.etcdClient}`,
      // Throw-away data: see the comment in deploy/patroni.yml.
      FSYNC: 'off',
    }),
  );
  chownSync(config, postgresUser.uid, postgresUser.gid);
  state.pids[node.name] = startDetached('patroni', [config], {
    log: join(node.dir, 'patroni.out'),
    cwd: node.dir,
    env: { PATH: process.env.PATH, HOME: node.dir, LANG: 'C.UTF-8' },
    ...postgresUser,
  });
}

function startApp(state, app) {
  state.pids[app.name] = startDetached(process.execPath, serverNodeArgs(), {
    log: join(HOME, `${app.name}.log`),
    cwd: ROOT,
    env: { ...state.appEnv, PORT: String(app.port) },
  });
}

async function query(url, sql) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------

/** Role of each node as its Patroni reports it: primary, replica (sync or not), or down. */
async function nodeRoles(state) {
  return Promise.all(
    state.nodes.map(async (node) => {
      const base = `http://127.0.0.1:${node.restPort}`;
      const [primary, sync] = await Promise.all([
        httpStatus(`${base}/primary`),
        httpStatus(`${base}/sync`),
      ]);
      const role =
        primary === 200
          ? 'primary'
          : sync === 200
            ? 'sync-standby'
            : primary === undefined
              ? 'down'
              : 'replica';
      return { ...node, role };
    }),
  );
}

async function status() {
  const state = readState();
  const nodes = await nodeRoles(state);
  const apps = await Promise.all(
    state.apps.map(async (app) => ({
      name: app.name,
      port: app.port,
      up:
        isAlive(state.pids[app.name]) &&
        (await httpStatus(`http://127.0.0.1:${app.port}/health/ready`)) === 200,
    })),
  );
  return {
    url: state.url,
    primary: nodes.find((node) => node.role === 'primary')?.name ?? null,
    standbys: nodes
      .filter((node) => node.role.endsWith('standby') || node.role === 'replica')
      .map((node) => node.name),
    nodes: nodes.map(({ name, role, pgPort, restPort }) => ({ name, role, pgPort, restPort })),
    apps,
    ports: state.ports,
  };
}

/** The primary's machine dies: its Patroni, its postmaster and every backend get SIGKILL at once. */
async function killPrimary() {
  const state = readState();
  const primary = (await nodeRoles(state)).find((node) => node.role === 'primary');
  if (!primary) throw new Error('no node is primary right now');
  const pids = withDescendants([state.pids[primary.name], postmasterPid(primary)]);
  signal(pids, 'SIGKILL');
  const at = new Date().toISOString();
  log(`killed ${primary.name} (pids ${pids.join(' ')})`);
  return { killed: primary.name, at };
}

function postmasterPid(node) {
  try {
    return Number(readFileSync(join(node.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

/** A planned switchover through Patroni's REST API, to the synchronous standby. */
async function switchover() {
  const state = readState();
  const nodes = await nodeRoles(state);
  const primary = nodes.find((node) => node.role === 'primary');
  const candidate = nodes.find((node) => node.role === 'sync-standby');
  if (!primary || !candidate)
    throw new Error('a switchover needs a primary and a synchronous standby');
  const response = await fetch(`http://127.0.0.1:${primary.restPort}/switchover`, {
    method: 'POST',
    body: JSON.stringify({ leader: primary.name, candidate: candidate.name }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`Patroni refused the switchover: ${response.status} ${text}`);
  await waitFor(
    `${candidate.name} to be primary`,
    async () => (await httpStatus(`http://127.0.0.1:${candidate.restPort}/primary`)) === 200,
  );
  log(text.trim());
  return { from: primary.name, to: candidate.name, at: new Date().toISOString() };
}

/**
 * The crashed machines come back: every node whose Patroni is gone and every app instance that is
 * gone start again. Patroni rejoins the old primary as a standby (pg_rewind when it diverged).
 */
async function restart() {
  const state = readState();
  const postgresUser = userIds('postgres');
  const nodes = state.nodes.filter((node) => !isAlive(state.pids[node.name]));
  for (const node of nodes) {
    // A killed postmaster leaves its pid file; Patroni sees no such process and starts afresh.
    startNode(state, node, postgresUser);
  }
  const apps = state.apps.filter((app) => !isAlive(state.pids[app.name]));
  for (const app of apps) startApp(state, app);
  writeState(state);
  for (const node of nodes) {
    await waitFor(
      `${node.name} to stream as a standby`,
      async () => (await httpStatus(`http://127.0.0.1:${node.restPort}/replica`)) === 200,
      { timeoutMs: 120_000 },
    );
  }
  for (const app of apps) {
    await waitFor(
      `${app.name} to be ready`,
      async () => (await httpStatus(`http://127.0.0.1:${app.port}/health/ready`)) === 200,
    );
  }
  return { restarted: [...nodes, ...apps].map((started) => started.name) };
}

/**
 * The write-unavailability window, `rounds` times: with the primary and a synchronous standby up,
 * a create every 100 ms through the API front, kill-primary, and the time from the kill to the
 * first 201; then restart. Reports each window and their median.
 */
async function measureFailover(rounds = '5') {
  const state = readState();
  const key = execFileSync(
    process.execPath,
    ['dist/api-key.cli.js', 'create', `measure-${Date.now()}`],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...state.appEnv, DATABASE_URL: state.urls.write },
      stdio: ['ignore', 'pipe', 2],
    },
  ).trim();
  const create = async () => {
    const response = await fetch(`${state.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'failover probe', categoryId: 1 }),
      signal: AbortSignal.timeout(15_000),
    }).catch(() => undefined);
    await response?.arrayBuffer();
    return response?.status;
  };
  const windowsMs = [];
  for (let round = 1; round <= Number(rounds); round++) {
    await waitFor('a primary and a synchronous standby', async () => {
      const roles = (await nodeRoles(state)).map((node) => node.role);
      return roles.includes('primary') && roles.includes('sync-standby');
    });
    if ((await create()) !== 201) throw new Error('writes fail before the kill');
    const killedAt = Date.parse((await killPrimary()).at);
    while ((await create()) !== 201) await sleep(100);
    windowsMs.push(Date.now() - killedAt);
    log(`round ${round}: writes back ${windowsMs.at(-1)} ms after the kill`);
    await restart();
  }
  const sorted = [...windowsMs].sort((a, b) => a - b);
  return { windowsMs, medianMs: sorted[Math.floor(sorted.length / 2)] };
}

/** SIGKILL to one app instance (the first still running, or the one named). */
async function killApp(name) {
  const state = readState();
  const app = state.apps.find((candidate) =>
    name ? candidate.name === name : isAlive(state.pids[candidate.name]),
  );
  if (!app || !isAlive(state.pids[app.name]))
    throw new Error(`no running app instance ${name ?? ''}`);
  signal([state.pids[app.name]], 'SIGKILL');
  log(`killed ${app.name} (pid ${state.pids[app.name]})`);
  return { killed: app.name, at: new Date().toISOString() };
}

async function down() {
  if (existsSync(STATE)) {
    const state = readState();
    const pid = (name) => state.pids[name];
    await stopProcesses([...APPS.map(pid), pid('haproxy'), pid('redis')].filter(Boolean));
    // Patroni stops its PostgreSQL on SIGTERM; whatever survives gets SIGKILL.
    const nodePids = state.nodes.flatMap((node) =>
      withDescendants([pid(node.name), postmasterPid(node)]),
    );
    await stopProcesses(nodePids, 15_000);
    await stopProcesses([pid('etcd')].filter(Boolean));
  }
  rmSync(HOME, { recursive: true, force: true });
  log('down');
  return { down: true };
}

const COMMANDS = {
  up,
  status,
  'kill-primary': killPrimary,
  switchover,
  'kill-app': killApp,
  restart,
  'measure-failover': measureFailover,
  down,
};

const [command, ...args] = process.argv.slice(2);
if (!COMMANDS[command]) {
  process.stderr.write(`usage: npm run cluster -- ${Object.keys(COMMANDS).join('|')}\n`);
  process.exit(2);
}
COMMANDS[command](...args).then(print, (error) => {
  process.stderr.write(
    `[cluster] ${command} failed: ${error.message}\n[cluster] logs are under ${HOME}; \`npm run cluster -- down\` stops everything and removes them\n`,
  );
  process.exit(1);
});
