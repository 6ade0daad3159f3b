import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore } from '../../../src/auth/api-key-store.js';
import { MetricsServer } from '../../../src/metrics/metrics-server.js';
import { OWED_COUNTED_UP_TO } from '../../../src/webhooks/webhook-subscription.js';
import { createPet } from '../../support/pets-api.js';
import { startSecondInstance, startTestApp, type TestApp } from '../../support/test-app.js';
import { type Engine, ENGINES } from '../../support/test-database.js';
import { REFUSING_URL, WebhookReceiver } from '../../support/webhook-receiver.js';

/** Three attempts, 1 s apart, to a receiver on loopback; the metrics listener on a free port. */
const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '1000',
  METRICS_PORT: '0',
  METRICS_HOST: '127.0.0.1',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `name{labels} value` lines of the exposition whose name starts with `prefix`, sorted. */
function seriesOf(exposition: string, prefix: string): string[] {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .sort();
}

/** `count` pet.created events committed in one statement, as fast as the engine writes them. */
function addEvents(t: TestApp, engine: Engine, count: number): Promise<unknown> {
  const occurredAt = new Date().toISOString();
  const columns = `INSERT INTO pet_events (type, occurred_at, pet_id, pet)
    SELECT 'pet.created', ${engine === 'postgres' ? '$1' : '?'}, n, '{"id":' || n || ',"name":"p"}'`;
  return engine === 'postgres'
    ? t.dataSource.query(`${columns} FROM generate_series(1, $2) AS g(n)`, [occurredAt, count])
    : t.dataSource.query(
        `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?) ${columns} FROM g`,
        [count, occurredAt],
      );
}

describe.each(ENGINES)('webhook metrics [%s]', (engine) => {
  let t: TestApp;
  let manager: string;
  let receiver: WebhookReceiver;
  let metricsUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, ENV);
    manager = (await t.app.get(ApiKeyStore).create('hooks', { scopes: ['webhooks:manage'] })).key;
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsServer).address()}/metrics`;
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM webhook_deliveries');
    await t.dataSource.query('DELETE FROM webhook_subscriptions');
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => receiver.close());

  const scrape = async () => (await fetch(metricsUrl)).text();
  /** Scrapes until `check` passes on the series of `prefix`; then returns them. */
  const scrapeUntil = async (prefix: string, check: (series: string[]) => boolean) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const series = seriesOf(await scrape(), prefix);
      if (check(series) || Date.now() > deadline) return series;
      await sleep(100);
    }
  };
  const subscribe = async (url = receiver.url): Promise<number> => {
    const created = await t.request('POST', '/v1/webhooks', { key: manager, body: { url } });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ id: number }>().id;
  };
  const attempts = (id: number) =>
    scrapeUntil(`animal_store_webhook_attempts_total{subscription_id="${id}"`, () => true);
  /** The count of a histogram's series, the whole histogram when `labels` is empty. */
  const countOf = async (histogram: string, labels = '') => {
    const [line] = seriesOf(await scrape(), `${histogram}_count${labels}`);
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  it('counts a delivered attempt, its latency, and the time from commit to delivery', async () => {
    const lagBefore = await countOf('animal_store_webhook_delivery_lag_seconds');
    const id = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);

    expect(
      await scrapeUntil(`animal_store_webhook_attempts_total{subscription_id="${id}"`, (s) =>
        s.some((line) => line.endsWith(' 1')),
      ),
    ).toEqual([`animal_store_webhook_attempts_total{subscription_id="${id}",outcome="success"} 1`]);
    expect(
      await countOf('animal_store_webhook_attempt_duration_seconds', `{subscription_id="${id}"}`),
    ).toBe(1);
    expect(await countOf('animal_store_webhook_delivery_lag_seconds')).toBe(lagBefore + 1);
    // Within a second of the commit: the bucket of 1 s holds it.
    const [withinOneSecond] = seriesOf(
      await scrape(),
      'animal_store_webhook_delivery_lag_seconds_bucket{le="1"}',
    );
    expect(Number(withinOneSecond.split(' ')[1])).toBeGreaterThanOrEqual(lagBefore + 1);
    expect(seriesOf(await scrape(), `animal_store_webhook_deliveries_owed{`)).toEqual([
      `animal_store_webhook_deliveries_owed{subscription_id="${id}"} 0`,
    ]);
    expect(seriesOf(await scrape(), `animal_store_webhook_oldest_owed_age_seconds{`)).toEqual([
      `animal_store_webhook_oldest_owed_age_seconds{subscription_id="${id}"} 0`,
    ]);
  });

  it('shows no worker statement on commits while the store has no enabled webhook', async () => {
    // beforeEach deleted every webhook; the worker's next look, within a second, finds none.
    await sleep(1_200);
    const leaseStatements = () =>
      countOf(
        'animal_store_db_query_duration_seconds',
        '{operation="UPDATE webhook_subscriptions",role="primary"}',
      );
    const before = await leaseStatements();
    for (let i = 0; i < 10; i++) await createPet(t, { name: `Quiet ${i}`, categoryId: 1 });
    await sleep(300);
    expect(await leaseStatements()).toBe(before);

    // With a webhook, the next commit's event is leased and delivered.
    await subscribe();
    await createPet(t, { name: 'Loud', categoryId: 1 });
    await receiver.waitFor(1);
    expect(await leaseStatements()).toBeGreaterThan(before);
  });

  it('shows what a failing receiver is owed, counts each failed attempt and the give-up', async () => {
    receiver.answer = () => ({ status: 500 });
    const id = await subscribe();
    for (const name of ['a', 'b', 'c']) await createPet(t, { name, categoryId: 1 });
    await receiver.waitFor(3);

    const owed = await scrapeUntil('animal_store_webhook_deliveries_owed{', (s) =>
      s.some((line) => line.endsWith(' 3')),
    );
    expect(owed).toEqual([`animal_store_webhook_deliveries_owed{subscription_id="${id}"} 3`]);
    const [age] = seriesOf(await scrape(), 'animal_store_webhook_oldest_owed_age_seconds{');
    expect(age).toMatch(
      new RegExp(`^animal_store_webhook_oldest_owed_age_seconds\\{subscription_id="${id}"\\} `),
    );
    expect(Number(age.split(' ')[1])).toBeGreaterThan(0);
    expect(Number(age.split(' ')[1])).toBeLessThan(10);

    await receiver.waitFor(9);
    expect(
      await scrapeUntil(`animal_store_webhook_attempts_total{subscription_id="${id}"`, (s) =>
        s.some((line) => line.endsWith(' 3') && line.includes('gave_up')),
      ),
    ).toEqual([
      `animal_store_webhook_attempts_total{subscription_id="${id}",outcome="failed"} 6`,
      `animal_store_webhook_attempts_total{subscription_id="${id}",outcome="gave_up"} 3`,
    ]);
    expect(
      await scrapeUntil('animal_store_webhook_deliveries_owed{', (s) =>
        s.some((line) => line.endsWith(' 0')),
      ),
    ).toEqual([`animal_store_webhook_deliveries_owed{subscription_id="${id}"} 0`]);
    expect(seriesOf(await scrape(), 'animal_store_webhook_oldest_owed_age_seconds{')).toEqual([
      `animal_store_webhook_oldest_owed_age_seconds{subscription_id="${id}"} 0`,
    ]);
  });

  it(`counts what a webhook is owed up to ${OWED_COUNTED_UP_TO}, in the gauge and in pendingDeliveries`, async () => {
    // Its receiver refuses connections, so the worker tries one event a second and the backlog
    // stays over the cap for the whole test.
    const id = await subscribe(REFUSING_URL);
    await addEvents(t, engine, OWED_COUNTED_UP_TO + 100);

    expect(await scrapeUntil('animal_store_webhook_deliveries_owed{', (s) => s.length > 0)).toEqual(
      [`animal_store_webhook_deliveries_owed{subscription_id="${id}"} ${OWED_COUNTED_UP_TO}`],
    );
    const webhook = await t.request('GET', `/v1/webhooks/${id}`, { key: manager });
    expect(webhook.json()).toMatchObject({ pendingDeliveries: OWED_COUNTED_UP_TO });
  });

  it('counts a timeout apart from other failures', async () => {
    receiver.answer = (_delivery, index) => ({ status: 200, delayMs: index === 0 ? 1_500 : 0 });
    const id = await subscribe();
    await createPet(t, { name: 'Slow', categoryId: 1 });
    await receiver.waitFor(2, 8_000);
    expect(
      await scrapeUntil(`animal_store_webhook_attempts_total{subscription_id="${id}"`, (s) =>
        s.some((line) => line.includes('success')),
      ),
    ).toEqual([
      `animal_store_webhook_attempts_total{subscription_id="${id}",outcome="success"} 1`,
      `animal_store_webhook_attempts_total{subscription_id="${id}",outcome="timeout"} 1`,
    ]);
  });

  it('counts a 410 as disabled, and a disabled webhook has no backlog series', async () => {
    receiver.answer = () => ({ status: 410 });
    const id = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);
    expect(
      await scrapeUntil(
        `animal_store_webhook_attempts_total{subscription_id="${id}"`,
        (s) => s.length > 0,
      ),
    ).toEqual([
      `animal_store_webhook_attempts_total{subscription_id="${id}",outcome="disabled"} 1`,
    ]);
    // The attempt is counted as it ends; the webhook is disabled when its batch is recorded.
    await vi.waitFor(async () =>
      expect((await t.request('GET', `/v1/webhooks/${id}`, { key: manager })).json()).toMatchObject(
        { disabled: true },
      ),
    );
    expect(seriesOf(await scrape(), 'animal_store_webhook_deliveries_owed{')).toEqual([]);
    expect(seriesOf(await scrape(), 'animal_store_webhook_oldest_owed_age_seconds{')).toEqual([]);
  });

  it('drops every series of a deleted webhook', async () => {
    const id = await subscribe();
    await createPet(t, { name: 'Rex', categoryId: 1 });
    await receiver.waitFor(1);
    expect(
      await scrapeUntil(
        `animal_store_webhook_attempts_total{subscription_id="${id}"`,
        (s) => s.length > 0,
      ),
    ).toHaveLength(1);
    expect((await t.request('DELETE', `/v1/webhooks/${id}`, { key: manager })).statusCode).toBe(
      204,
    );

    // The scrape that finds it gone drops the series; the next one no longer has them.
    await scrape();
    const exposition = await scrape();
    expect(
      exposition.split('\n').filter((line) => line.includes(`subscription_id="${id}"`)),
    ).toEqual([]);
    expect(await attempts(id)).toEqual([]);
  });

  // PostgreSQL alone: two instances in this process share its event loop, and both write here (each
  // sends); on SQLite one's synchronous wait for the other's write lock (up to the 5 s busy
  // timeout) holds the loop the lock's holder needs to commit. Processes sharing one SQLite file
  // are tested in test/e2e/replicas.e2e-spec.ts.
  it.runIf(engine === 'postgres')(
    'reports the same backlog on every instance, whichever sends',
    async () => {
      const second = await startSecondInstance(t, ENV);
      try {
        receiver.answer = () => ({ status: 500 });
        const id = await subscribe();
        for (const name of ['a', 'b']) await createPet(t, { name, categoryId: 1 });
        await receiver.waitFor(2);
        const secondUrl = `http://127.0.0.1:${second.get(MetricsServer).address()}/metrics`;
        const owedOn = async (url: string) =>
          seriesOf(await (await fetch(url)).text(), 'animal_store_webhook_deliveries_owed{');
        // Both owed until their third attempt gives them up, two seconds on.
        expect([await owedOn(metricsUrl), await owedOn(secondUrl)]).toEqual([
          [`animal_store_webhook_deliveries_owed{subscription_id="${id}"} 2`],
          [`animal_store_webhook_deliveries_owed{subscription_id="${id}"} 2`],
        ]);
      } finally {
        await second.close();
      }
    },
  );

  it('declares every webhook metric, with its type, before any subscription exists', async () => {
    const types = seriesOf(await scrape(), '# TYPE animal_store_webhook_');
    expect(types).toEqual([
      '# TYPE animal_store_webhook_attempt_duration_seconds histogram',
      '# TYPE animal_store_webhook_attempts_total counter',
      '# TYPE animal_store_webhook_deliveries_owed gauge',
      '# TYPE animal_store_webhook_delivery_lag_seconds histogram',
      '# TYPE animal_store_webhook_oldest_owed_age_seconds gauge',
    ]);
  });
});
