// Starting, finding and stopping the harness's processes, and waiting for them to answer.
import { spawn, execFileSync } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Starts a program in the background, in a session of its own, outliving this command. */
export function startDetached(file, args, { log, env = process.env, cwd, uid, gid } = {}) {
  const out = openSync(log, 'a');
  const child = spawn(file, args, {
    detached: true,
    stdio: ['ignore', out, out],
    env,
    cwd,
    uid,
    gid,
  });
  child.unref();
  return child.pid;
}

export function isAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed process whose parent has not reaped it yet is a zombie: dead for our purposes.
  return readProcStat(pid)?.state !== 'Z';
}

function readProcStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** The processes and all their descendants (PostgreSQL's backends, Patroni's helpers). */
export function withDescendants(pids) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const all = new Set();
  const visit = (pid) => {
    if (all.has(pid)) return;
    all.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const pid of pids.filter(Boolean)) visit(pid);
  return [...all];
}

export function signal(pids, name) {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM, then SIGKILL to whatever still runs after `graceMs`. */
export async function stopProcesses(pids, graceMs = 10_000) {
  signal(pids, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(isAlive) && Date.now() < deadline) await sleep(100);
  signal(pids.filter(isAlive), 'SIGKILL');
}

/** Ports the OS reports free right now, never PostgreSQL's or Redis's usual ones. */
export async function freePorts(count) {
  const servers = [];
  const ports = [];
  while (ports.length < count) {
    const server = createServer();
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    servers.push(server);
    const { port } = server.address();
    if (port !== 5432 && port !== 6379) ports.push(port);
  }
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export async function waitFor(what, check, { timeoutMs = 60_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`,
  );
}

/** Status code of a GET, or undefined when nothing answers. */
export async function httpStatus(url, timeoutMs = 2000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}

export async function redisPing(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

export function userIds(name) {
  return {
    uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim()),
  };
}
