import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTAINER_IMAGE,
  createKeyIn,
  freeLowPort,
  podman,
  podmanOk,
  waitUntilReady,
} from '../../support/containers.js';
import { kustomize } from '../../support/kubernetes.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

const describeWithImage = CONTAINER_IMAGE ? describe : describe.skip;

/** The pod's service container: kube play names it `<pod>-<container>`. */
async function appContainer(): Promise<string> {
  const names = await podmanOk([
    'ps',
    '--filter',
    'label=app.kubernetes.io/name=animal-store',
    '--format',
    '{{.Names}}',
  ]);
  return names.split('\n').find((name) => name.endsWith('-animal-store'))!;
}

/**
 * The PostgreSQL overlay's Deployment and ConfigMap as rendered, run by `podman kube play`: the
 * pod with its security context, probes' endpoints and configuration, on the host's network to
 * reach the test PostgreSQL, one replica. What a cluster would add (the Service, the HPA, the PDB,
 * the ServiceMonitor) podman ignores. Its own probes need a shell, so the test probes.
 */
describeWithImage('the PostgreSQL-mode Deployment under `podman kube play` [container]', () => {
  let dir: string;
  let file: string;
  let database: TestDatabase;
  let baseUrl: string;
  let metricsUrl: string;
  /** From the container's start, when our process can begin, to /health/ready answering 200. */
  let readyMs: number;

  beforeAll(async () => {
    const objects = kustomize('deploy/kubernetes/overlays/postgres');
    const config = objects.find((object) => object.kind === 'ConfigMap')!;
    const deployment = objects.find((object) => object.kind === 'Deployment')! as Record<
      string,
      any
    >;
    const [port, metricsPort] = [await freeLowPort(), await freeLowPort()];
    database = await createTestDatabase('postgres');
    Object.assign(config.data as object, {
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    // One pod: podman starts every replica on this machine, and on the host's network they share
    // the ports. With the manifest's 2, the second failed on EADDRINUSE and, restartPolicy Always,
    // booted Node again and again: twice the CPU to the first answer (2.3-3.0 s against 1.2-1.6 s)
    // and a core kept busy after it. With one core for the containers the pod was ready in
    // 2.5-3.2 s against 1.2-1.5 s; on a loaded 2-core machine, in 7-9 s.
    // Two containers on one database are image.e2e-spec.ts's; a cluster gives each pod its own IP.
    deployment.spec.replicas = 1;
    const pod = deployment.spec.template.spec;
    pod.hostNetwork = true;
    pod.containers[0].image = CONTAINER_IMAGE;
    pod.containers[0].ports = [];
    dir = await mkdtemp(join(tmpdir(), 'animal-store-kube-'));
    file = join(dir, 'postgres.yaml');
    await writeFile(file, [config, deployment].map((object) => stringify(object)).join('---\n'));
    // The Secret the Deployment reads. podman 4.3 fails on a Secret in the file, but takes a
    // podman secret holding the Secret's data as JSON, each value in base64.
    const secret = { DATABASE_URL: Buffer.from(database.url).toString('base64') };
    await writeFile(join(dir, 'secret.json'), JSON.stringify(secret));
    await podmanOk(['secret', 'create', 'animal-store-database', join(dir, 'secret.json')]);
    baseUrl = `http://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    // Migrations first, as a rollout runs them (docs/deployment.md, "Kubernetes"): the pod's
    // start is then only its own.
    await podmanOk([
      'run',
      '--rm',
      '--pull=never',
      '--network',
      'host',
      '--env',
      `DATABASE_URL=${database.url}`,
      CONTAINER_IMAGE!,
      'node',
      'dist/api-key.cli.js',
      'list',
    ]);
    const playedAt = Date.now();
    await podmanOk(['kube', 'play', '--start', file]);
    await waitUntilReady(`${baseUrl}/health/ready`);
    const readyAt = Date.now();
    // Timed from the container's own start, as podman recorded it: before it, kube play makes the
    // pod, its infra container, the secret's environment and healthchecks it cannot schedule
    // here (no systemd): podman's work, not the service's, 0.2-0.5 s here. The plain container
    // (image.e2e-spec.ts) is timed the same way.
    const startedAt = Number(
      await podmanOk([
        'inspect',
        await appContainer(),
        '--format',
        '{{.State.StartedAt.UnixMilli}}',
      ]),
    );
    readyMs = readyAt - startedAt;
    console.info(
      `[container] kube play: podman ${startedAt - playedAt} ms, then ready in ${readyMs} ms`,
    );
  });
  afterAll(async () => {
    if (file) await podman(['kube', 'down', file]);
    await podman(['secret', 'rm', 'animal-store-database']);
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gets ready, answers its probes and its metrics, and serves a key made inside it', async () => {
    // As the plain container (image.e2e-spec.ts), under the manifest's limits (one CPU).
    expect(readyMs).toBeLessThan(3_000);
    const live = await fetch(`${baseUrl}/health/live`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const metrics = await fetch(metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP /m);

    const key = await createKeyIn(await appContainer());
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await fetch(`${baseUrl}/v1/pets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    expect(await (await fetch(`${baseUrl}/v1/pets/${pet.id}`, { headers })).json()).toEqual(pet);
  });

  it('runs the pod as the manifest says: uid 65532, read-only root, no capabilities', async () => {
    const container = await appContainer();
    const probe = `
      const fs = require('node:fs'); const status = fs.readFileSync('/proc/self/status', 'utf8');
      let root; try { fs.writeFileSync('/app/x', ''); root = 'written'; } catch (e) { root = e.code; }
      console.log(JSON.stringify({ uid: process.getuid(), root,
        capabilities: /CapEff:\\s+(\\S+)/.exec(status)[1], seccomp: /Seccomp:\\s+(\\S+)/.exec(status)[1] }));`;
    expect(JSON.parse(await podmanOk(['exec', container, 'node', '-e', probe]))).toEqual({
      uid: 65532,
      root: 'EROFS',
      capabilities: '0000000000000000',
      seccomp: '2',
    });
  });
});
