import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const canPin = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
    return availableParallelism() >= 2;
  } catch {
    return false;
  }
})();

/** `[command, ...args]` run on one CPU when taskset and a second core exist; unpinned otherwise. */
export function cpuPin(cpu, command, args) {
  return canPin ? ['taskset', '-c', String(cpu), command, ...args] : [command, ...args];
}

export const pinning = canPin
  ? 'server on CPU 0, load on CPU 1 (taskset)'
  : 'not pinned (no taskset or one CPU)';
