import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTAINER_IMAGE,
  createKeyIn,
  freeLowPort,
  podman,
  podmanOk,
  stopContainer,
  uniqueName,
  waitUntilReady,
} from '../../support/containers.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

/** The Dockerfile's user: a fixed uid, so Kubernetes' runAsNonRoot can check it. */
const UID = 65532;
/** How the suite runs every container: as the restricted Kubernetes profile would. */
const HARDENED = [
  '--read-only',
  // No tmpfs on /tmp and /run either: the service writes nothing but its data directory.
  '--read-only-tmpfs=false',
  '--cap-drop=ALL',
  '--security-opt',
  'no-new-privileges',
];

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** A PEM certificate's base64, whatever its line breaks. */
const base64Of = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');

const describeWithImage = CONTAINER_IMAGE ? describe : describe.skip;
const image = CONTAINER_IMAGE ?? '';

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

function client(baseUrl: string, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  return {
    create: (pet: Omit<Pet, 'id'>) =>
      fetch(`${baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(pet),
      }),
    list: (query = '') => fetch(`${baseUrl}/v1/pets${query}`, { headers }),
    get: (id: number) => fetch(`${baseUrl}/v1/pets/${id}`, { headers }),
    patch: (id: number, patch: Partial<Pet>) =>
      fetch(`${baseUrl}/v1/pets/${id}`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify(patch),
      }),
  };
}

/** Every pet, following the Link rel="next" header page by page. */
async function allPets(api: ReturnType<typeof client>): Promise<Pet[]> {
  const pets: Pet[] = [];
  for (let query = '?limit=100'; ;) {
    const page = await api.list(query);
    pets.push(...((await page.json()) as Pet[]));
    const next = /<[^>]*\?([^>]*)>;\s*rel="next"/.exec(page.headers.get('link') ?? '');
    if (!next) return pets;
    query = `?${next[1]}`;
  }
}

describeWithImage('the image on SQLite, hardened, on a named volume [container]', () => {
  const volume = uniqueName('animal-store-data');
  const containers: string[] = [];
  let baseUrl: string;
  let container: string;
  let readyMs: number;
  let key: string;

  /** Starts the image on the volume; resolves once it answers /health/ready. */
  async function start(): Promise<{ name: string; baseUrl: string; readyMs: number }> {
    const name = uniqueName('animal-store');
    const port = await freeLowPort();
    containers.push(name);
    const runAt = Date.now();
    await podmanOk([
      'run',
      '--detach',
      '--pull=never',
      '--name',
      name,
      '--publish',
      `127.0.0.1:${port}:3000`,
      '--volume',
      `${volume}:/data`,
      ...HARDENED,
      image,
    ]);
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(`${url}/health/ready`);
    const readyAt = Date.now();
    // Timed from the container's own start, as podman recorded it: before it, `podman run` makes
    // the volume and the network, podman's work and not the service's (kube-play.e2e-spec.ts).
    const startedAt = Number(
      await podmanOk(['inspect', name, '--format', '{{.State.StartedAt.UnixMilli}}']),
    );
    console.info(
      `[container] podman run: podman ${startedAt - runAt} ms, then ready in ${readyAt - startedAt} ms`,
    );
    return { name, baseUrl: url, readyMs: readyAt - startedAt };
  }

  beforeAll(async () => {
    ({ name: container, baseUrl, readyMs } = await start());
    key = await createKeyIn(container);
  });
  afterAll(async () => {
    await podman(['rm', '--force', '--volumes', ...containers]);
    await podman(['volume', 'rm', '--force', volume]);
  });

  it("answers /health/ready within 3 s of its container's start", () => {
    expect(readyMs).toBeLessThan(3_000);
  });

  it('runs as the fixed non-root uid, with no capabilities, on a read-only root', async () => {
    const probe = `
      const fs = require('node:fs');
      const attempt = (path) => { try { fs.writeFileSync(path, 'x'); return 'written'; } catch (e) { return e.code; } };
      const status = fs.readFileSync('/proc/self/status', 'utf8');
      console.log(JSON.stringify({
        uid: process.getuid(), gid: process.getgid(),
        effectiveCapabilities: /CapEff:\\s+(\\S+)/.exec(status)[1],
        noNewPrivileges: /NoNewPrivs:\\s+(\\S+)/.exec(status)[1],
        app: attempt('/app/written'), tmp: attempt('/tmp/written'), root: attempt('/written'),
      }));`;
    const out = await podmanOk(['exec', container, 'node', '-e', probe]);

    expect(JSON.parse(out)).toEqual({
      uid: UID,
      gid: UID,
      effectiveCapabilities: '0000000000000000',
      noNewPrivileges: '1',
      app: 'EROFS',
      tmp: 'ENOENT',
      root: 'EROFS',
    });
  });

  it('creates, lists, gets and patches with a key made by `exec … apikey create`', async () => {
    const api = client(baseUrl, key);

    const created = await api.create({ name: 'Rex', categoryId: 1, status: 'available' });
    expect(created.status).toBe(201);
    const rex = (await created.json()) as Pet;
    expect(rex).toEqual({ id: rex.id, name: 'Rex', categoryId: 1, status: 'available' });
    const listed = await api.list();
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([rex]);
    const got = await api.get(rex.id);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(rex);
    const patched = await api.patch(rex.id, { status: 'pending' });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ ...rex, status: 'pending' });
    expect(await (await api.get(rex.id)).json()).toEqual({ ...rex, status: 'pending' });
  });

  it('stops on `podman stop` with exit 0 within 2 s, every acknowledged create kept across a restart', async () => {
    const api = client(baseUrl, key);
    const acknowledged: Pet[] = [];
    let stopping: Promise<{ exitCode: number; ms: number }> | undefined;
    // Creates go out until the stop refuses them; the stop comes once 20 were acknowledged.
    const writer = async (worker: number) => {
      for (let i = 0; ; i++) {
        try {
          const response = await api.create({ name: `burst ${worker}-${i}`, categoryId: 2 });
          if (response.status !== 201) return;
          acknowledged.push((await response.json()) as Pet);
          if (acknowledged.length === 20) stopping = stopContainer(container);
        } catch {
          return; // refused or reset: the container is stopping
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    const stopped = await stopping!;

    expect(stopped).toEqual({ exitCode: 0, ms: stopped.ms });
    expect(stopped.ms).toBeLessThan(2_000);
    const again = await start();
    const stored = await allPets(client(again.baseUrl, key));
    expect(stored.length).toBeGreaterThanOrEqual(acknowledged.length + 1);
    for (const pet of acknowledged) {
      expect(stored).toContainEqual(pet);
    }
  });
});

describeWithImage('the image on PostgreSQL, two containers on one database [container]', () => {
  const containers: string[] = [];
  let database: TestDatabase;
  const baseUrls: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    for (let i = 0; i < 2; i++) {
      const name = uniqueName('animal-store-pg');
      const port = await freeLowPort();
      containers.push(name);
      // The host's network: the test PostgreSQL listens on the machine's loopback.
      await podmanOk([
        'run',
        '--detach',
        '--pull=never',
        '--name',
        name,
        '--network',
        'host',
        '--env',
        'HOST=127.0.0.1',
        '--env',
        `PORT=${port}`,
        '--env',
        `DATABASE_URL=${database.url}`,
        ...HARDENED,
        image,
      ]);
      baseUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(baseUrls.map((url) => waitUntilReady(`${url}/health/ready`)));
  });
  afterAll(async () => {
    await podman(['rm', '--force', '--volumes', ...containers]);
    await database?.drop();
  });

  it('serves one set of pets through both, and both stop with exit 0', async () => {
    const key = await createKeyIn(containers[0]);
    const [first, second] = baseUrls.map((url) => client(url, key));

    const rex = (await (await first.create({ name: 'Rex', categoryId: 1 })).json()) as Pet;
    expect(await (await second.get(rex.id)).json()).toEqual(rex);
    const patched = await second.patch(rex.id, { status: 'available' });
    expect(patched.status).toBe(200);
    expect(await (await first.get(rex.id)).json()).toEqual({ ...rex, status: 'available' });
    expect(await (await first.list()).json()).toEqual(await (await second.list()).json());

    const stops = await Promise.all(containers.map(stopContainer));
    expect(stops.map(({ exitCode }) => exitCode)).toEqual([0, 0]);
  });
});

describeWithImage('the image before its database answers [container]', () => {
  const name = uniqueName('animal-store-waiting');
  afterAll(() => podman(['rm', '--force', '--volumes', name]));

  it('stops on the first SIGTERM with exit 0 within 2 s', async () => {
    const port = await freeLowPort();
    await podmanOk([
      'run',
      '--detach',
      '--pull=never',
      '--name',
      name,
      '--network',
      'host',
      '--env',
      `DATABASE_URL=postgres://postgres@127.0.0.1:${port}/nothing_listens_here`,
      ...HARDENED,
      image,
    ]);
    for (let waited = 0; ; waited += 100) {
      if ((await podmanOk(['logs', name])).includes('Unable to connect to the database')) break;
      if (waited > 15_000) throw new Error('the container never tried the database');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const stopped = await stopContainer(name);

    expect(stopped).toEqual({ exitCode: 0, ms: stopped.ms });
    expect(stopped.ms).toBeLessThan(2_000);
  });
});

describeWithImage('what the image holds [container]', () => {
  it('has none of the build machine’s extra CA certificates, in its files or its environment', async () => {
    const config = JSON.parse(await podmanOk(['image', 'inspect', image]))[0].Config;
    expect(config.Env.filter((entry: string) => entry.startsWith('NODE_EXTRA_CA_CERTS'))).toEqual(
      [],
    );
    expect(config.User).toBe(`${UID}:${UID}`);
    expect(config.StopSignal).toBe('SIGTERM');

    // A line of base64 from each certificate this machine adds to Node's own roots (which the
    // node binary holds), searched for in every file of the image.
    const extra = process.env.NODE_EXTRA_CA_CERTS;
    const certificates = extra ? (readFileSync(extra, 'utf8').match(PEM_CERTIFICATE) ?? []) : [];
    const roots = new Set(rootCertificates.map(base64Of));
    const lines = certificates
      .filter((certificate) => !roots.has(base64Of(certificate)))
      .map((certificate) => certificate.split(/\r?\n/)[1]);
    const search = `
      const fs = require('node:fs'); const path = require('node:path');
      const needles = JSON.parse(process.argv[1]); const found = [];
      const walk = (dir) => { for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (entry.isFile()) { const text = fs.readFileSync(file, 'latin1');
          for (const needle of needles) if (text.includes(needle)) found.push(file); } } };
      for (const top of ['/app', '/etc', '/usr', '/lib', '/lib64', '/run']) if (fs.existsSync(top)) walk(top);
      console.log(JSON.stringify(found));`;
    const out = await podmanOk([
      'run',
      '--rm',
      '--pull=never',
      '--network',
      'none',
      ...HARDENED,
      image,
      'node',
      '-e',
      search,
      JSON.stringify(lines),
    ]);
    expect(JSON.parse(out)).toEqual([]);
  });
});
