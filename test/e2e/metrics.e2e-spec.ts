import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiClient } from '../support/http-client.js';
import { freePort } from '../support/free-port.js';
import { runApiKeyCli, startServer, type ServerProcess } from '../support/processes.js';
import { exchange, parseResponses } from '../support/raw-http.js';
import {
  PROMETHEUS_BIN,
  startPrometheus,
  type Prometheus,
  type PromSample,
} from '../support/prometheus.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const execFileAsync = promisify(execFile);
/** Debian's prometheus package (promtool included); .ci/run installs it, so CI never skips these. */
const hasPrometheus = existsSync(PROMETHEUS_BIN);
const DASHBOARD = 'deploy/grafana/animal-store-api.json';
const SUNSET_OF_GET_PET = Date.parse('2030-12-05T00:00:00Z') / 1000;

/** Every query of the Grafana dashboard, with the title of its panel; rows have none. */
function dashboardQueries(): { title: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap(({ title, targets = [] }) =>
    targets.map(({ expr }) => ({ title, expr })),
  );
}

/**
 * The series names an exposition declares: each metric of its `# TYPE` lines, a histogram as its
 * `_bucket`, `_count` and `_sum` series, so that a metric counts before its first observation.
 */
function exposedSeriesNames(exposition: string): Set<string> {
  const names = Array.from(exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm), ([, name, type]) =>
    type === 'histogram' ? ['_bucket', '_count', '_sum'].map((suffix) => name + suffix) : [name],
  );
  return new Set(names.flat());
}

/** Polls a query until it returns samples: Prometheus scrapes every second. */
async function samplesOf(prometheus: Prometheus, promql: string): Promise<PromSample[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const samples = await prometheus.query(promql);
    if (samples.length > 0 || Date.now() > deadline) return samples;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** `{labels…} value` of each sample, sorted, so a failure shows what Prometheus holds. */
function byLabels(samples: PromSample[], labels: string[]): string[] {
  return samples
    .map((s) => `${labels.map((l) => `${l}=${s.metric[l]}`).join(',')} ${Number(s.value[1])}`)
    .sort();
}

describe.skipIf(!hasPrometheus)('Prometheus configuration in deploy/ [prometheus]', () => {
  it('promtool accepts the scrape config and the rules, and the rules pass their tests', async () => {
    const cwd = 'deploy/prometheus';
    for (const args of [
      ['check', 'config', 'prometheus.yml'],
      ['check', 'rules', 'alerts.yml'],
      ['test', 'rules', 'alerts.test.yml'],
    ])
      await expect(execFileAsync('promtool', args, { cwd })).resolves.toMatchObject({
        stdout: expect.stringContaining('SUCCESS'),
      });
  });
});

describe.skipIf(!hasPrometheus).each(ENGINES)(
  'metrics scraped by a real Prometheus on %s [prometheus]',
  (engine) => {
    let database: TestDatabase;
    let server: ServerProcess;
    let metricsOrigin: string;
    let prometheus: Prometheus;
    let client: ApiClient;
    let anonymous: ApiClient;

    beforeAll(async () => {
      database = await createTestDatabase(engine);
      const metricsPort = await freePort();
      metricsOrigin = `http://127.0.0.1:${metricsPort}`;
      server = await startServer({
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        DATABASE_URL: database.url,
        METRICS_PORT: String(metricsPort),
      });
      const key = (await runApiKeyCli(['create', 'storefront'], database.url)).stdout.trim();
      client = apiClient(server.baseUrl, key);
      anonymous = apiClient(server.baseUrl, null);
      prometheus = await startPrometheus([`127.0.0.1:${metricsPort}`]);

      const created = await client.post(
        '/v1/pets',
        { name: 'Rex', categoryId: 1 },
        { 'Idempotency-Key': 'k-1' },
      );
      const replayed = await client.post(
        '/v1/pets',
        { name: 'Rex', categoryId: 1 },
        { 'Idempotency-Key': 'k-1' },
      );
      expect([created.status, replayed.status]).toEqual([201, 201]);
      const id = (created.body as { id: number }).id;
      for (let i = 0; i < 3; i++) expect((await client.get(`/v1/pets/${id}`)).status).toBe(200);
      for (const expected of [200, 409]) {
        const sale = await client.patch(`/v1/pets/${id}`, { status: 'sold' });
        expect(sale.status).toBe(expected);
      }
      expect((await client.get('/v1/pets?limit=2')).status).toBe(200);
      expect((await client.get('/v1/pets/999999')).status).toBe(404);
      expect((await anonymous.get('/v1/pets')).status).toBe(401);
      expect((await anonymous.get('/v1/pets', { authorization: 'Basic c2VjcmV0' })).status).toBe(
        401,
      );
      const unknownKey = `pets_${'a'.repeat(12)}_${'b'.repeat(43)}`;
      expect(
        (await anonymous.get('/v1/pets', { authorization: `Bearer ${unknownKey}` })).status,
      ).toBe(401);
      expect((await client.get('/v1/no/such/path/12345')).status).toBe(404);
      // Refused before its route's own hooks run, yet still counted under its operation.
      const twoHosts = 'GET /v1/pets HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n';
      const [refused] = parseResponses(await exchange(server.baseUrl, twoHosts));
      expect(refused.status).toBe(400);
    }, 60_000);

    afterAll(async () => {
      client?.close();
      anonymous?.close();
      await prometheus?.stop();
      server?.child.kill('SIGKILL');
      await database?.drop();
    });

    it('counts requests by operation, method and status class, never by raw path', async () => {
      const samples = await samplesOf(
        prometheus,
        'sum by (operation, method, status_class) (animal_store_http_request_duration_seconds_count)',
      );
      expect(byLabels(samples, ['operation', 'method', 'status_class'])).toEqual([
        'operation=createPet,method=POST,status_class=2xx 2',
        'operation=getPet,method=GET,status_class=2xx 3',
        'operation=getPet,method=GET,status_class=4xx 1',
        'operation=listPets,method=GET,status_class=2xx 1',
        'operation=listPets,method=GET,status_class=4xx 4',
        'operation=unmatched,method=GET,status_class=4xx 1',
        'operation=updatePet,method=PATCH,status_class=2xx 1',
        'operation=updatePet,method=PATCH,status_class=4xx 1',
      ]);
      const labelNames = new Set(
        (await prometheus.query('animal_store_http_request_duration_seconds_count')).flatMap((s) =>
          Object.keys(s.metric),
        ),
      );
      expect([...labelNames].sort()).toEqual(
        ['__name__', 'instance', 'job', 'method', 'operation', 'status_class'].sort(),
      );
    });

    it('keeps a latency histogram per operation', async () => {
      const buckets = await samplesOf(
        prometheus,
        'animal_store_http_request_duration_seconds_bucket{operation="getPet",status_class="2xx",le="+Inf"}',
      );
      expect(byLabels(buckets, ['operation', 'le'])).toEqual(['operation=getPet,le=+Inf 3']);
      const p99 = await samplesOf(
        prometheus,
        'histogram_quantile(0.99, sum by (le) (animal_store_http_request_duration_seconds_bucket{operation="getPet"}))',
      );
      expect(Number(p99[0].value[1])).toBeGreaterThan(0);
    });

    it('counts error responses by code, idempotent replays and deprecated calls by key name', async () => {
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_http_errors_total'), ['code']),
      ).toEqual([
        'code=INVALID_TRANSITION 1',
        'code=NOT_FOUND 2',
        'code=UNAUTHORIZED 3',
        'code=VALIDATION_FAILED 1',
      ]);
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_auth_failures_total'), ['reason']),
      ).toEqual(['reason=malformed 1', 'reason=missing 1', 'reason=unknown 1']);
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_idempotent_replays_total'), []),
      ).toEqual([' 1']);
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_deprecated_calls_total'), [
          'operation',
          'api_key',
        ]),
      ).toEqual(['operation=getPet,api_key=storefront 4']);
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_operation_sunset_timestamp_seconds'), [
          'operation',
        ]),
      ).toEqual([`operation=getPet ${SUNSET_OF_GET_PET}`]);
    });

    it('times each statement by name and server role, the readiness ping included', async () => {
      // The readiness gauge pings at each scrape, after the histograms of that scrape are read: a
      // scrape shows the pings of the scrapes before it.
      await samplesOf(
        prometheus,
        'animal_store_db_query_duration_seconds_count{operation="SELECT"}',
      );
      const statements = byLabels(
        await samplesOf(
          prometheus,
          'sum by (operation, role) (animal_store_db_query_duration_seconds_count)',
        ),
        ['operation', 'role'],
      );
      const ping = 'operation=SELECT,role=primary';
      // The webhook worker looks every second whether the store has an enabled webhook (none here,
      // so it leases nothing), and each scrape reads the webhook backlog: their counts depend on
      // time.
      const worker = statements.filter((s) => s.includes(' webhook_'));
      expect(worker.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([
        'operation=SELECT webhook_subscriptions,role=primary',
      ]);
      // Keys are looked up when their 2 s in the cache run out, a number of times that depends on
      // time; a key's last use and last deprecated call are written once a minute.
      const keys = statements.filter((s) => s.includes(' api_keys'));
      expect(keys.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([
        'operation=SELECT api_keys,role=primary',
        'operation=UPDATE api_keys,role=primary',
      ]);
      // The order sweep looks every second for lapsed holds (none here, so it writes nothing),
      // and each scrape reads the open orders: their counts depend on time too.
      const orders = statements.filter((s) => s.includes(' orders,'));
      expect(orders.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([
        'operation=SELECT orders,role=primary',
      ]);
      // The inventory fold adds the counted changes into the counts every second once there are
      // any: its counts depend on time too.
      const fold = statements.filter((s) => s.includes(' pet_count'));
      expect(
        engine === 'postgres'
          ? ['operation=DELETE pet_count_changes + INSERT pet_counts + UPDATE SET,role=primary']
          : [
              'operation=DELETE pet_count_changes,role=primary',
              'operation=INSERT pet_counts,role=primary',
            ],
      ).toEqual(expect.arrayContaining(fold.map((s) => s.replace(/ \d+$/, ''))));
      const requests = statements.filter(
        (s) => !worker.includes(s) && !keys.includes(s) && !orders.includes(s) && !fold.includes(s),
      );
      expect(requests.map((s) => (s.startsWith(`${ping} `) ? ping : s))).toEqual([
        'operation=INSERT idempotency_keys,role=primary 2',
        // The replay's pet and event are inserted, then rolled back with its claim. PostgreSQL
        // writes a pet and its event in one statement, SQLite in two.
        ...(engine === 'postgres'
          ? ['operation=INSERT pets + INSERT pet_events,role=primary 2']
          : ['operation=INSERT pet_events,role=primary 3', 'operation=INSERT pets,role=primary 2']),
        'operation=SELECT idempotency_keys,role=primary 1',
        'operation=SELECT pets,role=primary 7',
        ping,
        engine === 'postgres'
          ? 'operation=UPDATE pets + INSERT pet_events,role=primary 1'
          : 'operation=UPDATE pets,role=primary 1',
      ]);
      const pools = await prometheus.query('animal_store_db_pool_connections');
      if (engine === 'postgres')
        expect(byLabels(pools, ['role', 'state']).map((s) => s.split(' ')[0])).toEqual([
          'role=primary,state=idle',
          'role=primary,state=total',
          'role=primary,state=waiting',
        ]);
      else expect(pools).toEqual([]);
    });

    it('counts committed events by type, and reports open streams', async () => {
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_events_committed_total'), ['type']),
      ).toEqual(['type=pet.created 1', 'type=pet.updated 1']);
      expect(byLabels(await samplesOf(prometheus, 'animal_store_event_streams_open'), [])).toEqual([
        ' 0',
      ]);
    });

    it('reports readiness, requests in flight and Node process metrics', async () => {
      expect(byLabels(await samplesOf(prometheus, 'animal_store_ready'), [])).toEqual([' 1']);
      expect(
        byLabels(await samplesOf(prometheus, 'animal_store_http_requests_in_flight'), []),
      ).toEqual([' 0']);
      expect(await samplesOf(prometheus, 'process_resident_memory_bytes')).toHaveLength(1);
      expect(await samplesOf(prometheus, 'nodejs_eventloop_lag_p99_seconds')).toHaveLength(1);
    });

    it('answers every query of the Grafana dashboard', async () => {
      for (const { title, expr } of dashboardQueries())
        await expect(prometheus.query(expr), `${title}: ${expr}`).resolves.toBeInstanceOf(Array);
    });

    it('names in the dashboard only series the service exposes', async () => {
      const exposed = exposedSeriesNames(await (await fetch(`${metricsOrigin}/metrics`)).text());
      const named = dashboardQueries().flatMap(({ title, expr }) =>
        Array.from(expr.matchAll(/\b(?:animal_store|process|nodejs)_\w+/g), ([name]) => ({
          title,
          name,
        })),
      );

      expect(named.filter(({ name }) => !exposed.has(name))).toEqual([]);
      expect(named.map(({ name }) => name)).toContain('animal_store_event_lag_seconds_bucket');
    });

    it('writes an exposition promtool parses, with no lint problem in our metrics', async () => {
      const exposition = await (await fetch(`${metricsOrigin}/metrics`)).text();
      const lint = spawnSync('promtool', ['check', 'metrics'], { input: exposition });
      const problems = lint.stderr.toString().trim().split('\n');
      // Exit 3 is lint findings, 1 a parse error; the findings are prom-client's Node gauges
      // named `*_total`, which are not ours to rename.
      expect(lint.status, problems.join('\n')).toBe(3);
      expect(problems.filter((line) => !line.startsWith('nodejs_'))).toEqual([]);
    });

    it('serves metrics only on the metrics listener: the API port has no /metrics', async () => {
      const onApiPort = await client.get('/metrics');
      expect(onApiPort.status).toBe(404);
      expect(onApiPort.body).toEqual({ code: 'NOT_FOUND', message: 'No such route', status: 404 });
      const onMetricsPort = await fetch(`${metricsOrigin}/metrics`);
      expect(onMetricsPort.status).toBe(200);
      expect(onMetricsPort.headers.get('content-type')).toBe(
        'text/plain; version=0.0.4; charset=utf-8',
      );
      expect((await fetch(`${metricsOrigin}/other`)).status).toBe(404);
    });
  },
);

describe.skipIf(!hasPrometheus).each(ENGINES)(
  'webhook metrics scraped by a real Prometheus on %s [prometheus]',
  (engine) => {
    let database: TestDatabase;
    let server: ServerProcess;
    let prometheus: Prometheus;
    let receiver: WebhookReceiver;
    let subscriptionId: string;

    beforeAll(async () => {
      database = await createTestDatabase(engine);
      const metricsPort = await freePort();
      server = await startServer({
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        METRICS_PORT: String(metricsPort),
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s',
      });
      const cli = (args: string[]) => runApiKeyCli(args, database.url);
      const manager = (await cli(['create', 'hooks', '--scopes', 'webhooks:manage'])).stdout;
      const client = apiClient(server.baseUrl, (await cli(['create', 'storefront'])).stdout.trim());
      const managing = apiClient(server.baseUrl, manager.trim());
      prometheus = await startPrometheus([`127.0.0.1:${metricsPort}`]);
      receiver = await WebhookReceiver.start();
      // The first attempt fails, its retry a second later succeeds.
      receiver.answer = (_delivery, index) => ({ status: index === 0 ? 500 : 204 });
      const subscribed = await managing.post('/v1/webhooks', { url: receiver.url });
      expect(subscribed.status).toBe(201);
      subscriptionId = String((subscribed.body as { id: number }).id);
      expect((await client.post('/v1/pets', { name: 'Rex', categoryId: 1 })).status).toBe(201);
      await receiver.waitFor(2);
      client.close();
      managing.close();
    }, 60_000);

    afterAll(async () => {
      await receiver?.close();
      await prometheus?.stop();
      server?.child.kill('SIGKILL');
      await database?.drop();
    });

    it('counts attempts by webhook and outcome, labelled by its id and nothing a client sent', async () => {
      const attempts = await samplesOf(
        prometheus,
        'animal_store_webhook_attempts_total{outcome="success"}',
      );
      expect(byLabels(attempts, ['subscription_id', 'outcome'])).toEqual([
        `subscription_id=${subscriptionId},outcome=success 1`,
      ]);
      expect(
        byLabels(await prometheus.query('animal_store_webhook_attempts_total'), [
          'subscription_id',
          'outcome',
        ]),
      ).toEqual([
        `subscription_id=${subscriptionId},outcome=failed 1`,
        `subscription_id=${subscriptionId},outcome=success 1`,
      ]);
      const labelNames = new Set(attempts.flatMap((sample) => Object.keys(sample.metric)));
      expect([...labelNames].sort()).toEqual(
        ['__name__', 'instance', 'job', 'outcome', 'subscription_id'].sort(),
      );
      expect(
        byLabels(
          await samplesOf(
            prometheus,
            'sum by (subscription_id) (animal_store_webhook_attempt_duration_seconds_count)',
          ),
          ['subscription_id'],
        ),
      ).toEqual([`subscription_id=${subscriptionId} 2`]);
    });

    it('times the one delivery from its commit, retry included, and shows nothing owed after', async () => {
      const lag = await samplesOf(prometheus, 'animal_store_webhook_delivery_lag_seconds_count');
      expect(byLabels(lag, [])).toEqual([' 1']);
      // The retry came a second (less its jitter) after the failure: between 0.5 and 2.5 s.
      expect(
        byLabels(
          await prometheus.query('animal_store_webhook_delivery_lag_seconds_bucket{le=~"0.5|2.5"}'),
          ['le'],
        ),
      ).toEqual(['le=0.5 0', 'le=2.5 1']);
      for (const gauge of [
        'animal_store_webhook_deliveries_owed',
        'animal_store_webhook_oldest_owed_age_seconds',
      ])
        expect(
          byLabels(await samplesOf(prometheus, `max by (subscription_id) (${gauge})`), [
            'subscription_id',
          ]),
        ).toEqual([`subscription_id=${subscriptionId} 0`]);
    });
  },
);

describe('without METRICS_PORT', () => {
  it('opens no metrics listener: the process listens on its API port alone', async () => {
    const database = await createTestDatabase('sqlite');
    const server = await startServer({ NODE_ENV: 'production', DATABASE_URL: database.url });
    try {
      const { stdout } = await execFileAsync('ss', ['-ltnpH']);
      const ports = stdout
        .split('\n')
        .filter((line) => line.includes(`pid=${server.child.pid},`))
        .map((line) => line.split(/\s+/)[3]);
      expect(ports).toEqual([new URL(server.baseUrl).host]);
    } finally {
      server.child.kill('SIGKILL');
      await database.drop();
    }
  });
});
