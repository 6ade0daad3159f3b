import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

/**
 * The image the container suites run (`TEST_CONTAINER_IMAGE`, built from the Dockerfile by
 * .ci/run), or undefined when podman or the image is missing: those suites then skip themselves.
 */
export const CONTAINER_IMAGE = ((): string | undefined => {
  const image = process.env.TEST_CONTAINER_IMAGE;
  if (!image) return undefined;
  try {
    execFileSync('podman', ['image', 'exists', image], { stdio: 'ignore' });
    return image;
  } catch {
    return undefined;
  }
})();

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `podman ARGS` (with CONTAINERS_CONF, deploy/container/containers.conf, from the caller). */
export function podman(args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile('podman', args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `podman ARGS`, failing the test with podman's own words when it fails; its stdout, trimmed. */
export async function podmanOk(args: string[]): Promise<string> {
  const ran = await podman(args);
  if (ran.code !== 0) throw new Error(`podman ${args.join(' ')}: ${ran.stderr || ran.stdout}`);
  return ran.stdout.trim();
}

/** A name no other run uses, for a container, volume or pod. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * A free loopback port below 32768: podman's published ports above it can collide with the
 * machine's outgoing connections.
 */
export async function freeLowPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Polls `url` until it answers 200; the milliseconds that took. */
export async function waitUntilReady(url: string, timeoutMs = 15_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return Date.now() - start;
    } catch {
      // Not listening yet.
    }
    if (Date.now() - start > timeoutMs) throw new Error(`${url} not ready in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Creates a key with the CLI inside the container, as docs/deployment.md says to. */
export async function createKeyIn(container: string): Promise<string> {
  const out = await podmanOk(['exec', container, 'node', 'dist/api-key.cli.js', 'create', 'ci']);
  const key = /pets_\S+/.exec(out)?.[0];
  if (!key) throw new Error(`no key in: ${out}`);
  return key;
}

/** `podman stop` with the runtime's grace period; its exit code and how long the stop took. */
export async function stopContainer(container: string): Promise<{ exitCode: number; ms: number }> {
  const start = Date.now();
  await podmanOk(['stop', '--time', '10', container]);
  const ms = Date.now() - start;
  const exitCode = Number(
    await podmanOk(['inspect', container, '--format', '{{.State.ExitCode}}']),
  );
  return { exitCode, ms };
}
