import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from '../support/event-stream-client.js';
import { apiClient, type ApiClient } from '../support/http-client.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { startPgCluster } from '../support/pg-cluster.js';
import { runApiKeyCli, startServer, type ServerProcess, waitFor } from '../support/processes.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../support/test-database.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Spans leave in batches; a short delay keeps the test quick. */
const TRACING_ENV = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' };
const SERVER_KIND = 2;
const CLIENT_KIND = 3;
/** Webhooks to a receiver on loopback, retried 1 s after a failure. */
const WEBHOOK_ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0s,1s' };

function traceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

function logLines(server: ServerProcess): Record<string, unknown>[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(ENGINES)('traces over OTLP/HTTP on %s', (engine) => {
  let database: TestDatabase;
  let receiver: OtlpReceiver;
  let server: ServerProcess;
  let client: ApiClient;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    receiver = await startOtlpReceiver();
    server = await startServer({
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      ...TRACING_ENV,
      ...WEBHOOK_ENV,
    });
    key = (await runApiKeyCli(['create', 'tracing'], database.url)).stdout.trim();
    client = apiClient(server.baseUrl, key);
  });

  afterAll(async () => {
    client?.close();
    server?.child.kill('SIGKILL');
    await receiver?.close();
    await database?.drop();
  });

  async function spansOfTrace(traceId: string, count: number): Promise<ReceivedSpan[]> {
    await waitFor(
      () => receiver.spans.filter((s) => s.traceId === traceId).length >= count,
      10_000,
    );
    return receiver.spans.filter((s) => s.traceId === traceId);
  }

  /** A key lookup: only when the key's 2 s in the cache ran out, which depends on time. */
  const isKeyLookup = (span: ReceivedSpan) => span.name === 'SELECT api_keys';

  async function serverSpanOf(traceId: string): Promise<ReceivedSpan> {
    const isIt = (s: ReceivedSpan) => s.traceId === traceId && s.kind === SERVER_KIND;
    await waitFor(() => receiver.spans.some(isIt), 10_000);
    return receiver.spans.find(isIt)!;
  }

  it('makes one trace of a request, under the incoming traceparent, and sends its own back', async () => {
    const created = await client.post('/v1/pets', { name: 'Rex', categoryId: 1 });
    const incoming = traceparent();
    const answer = await client.get(`/v1/pets/${(created.body as { id: number }).id}`, {
      traceparent: incoming.header,
    });
    expect(answer.status).toBe(200);

    const spans = await spansOfTrace(incoming.traceId, 4);
    const http = spans.find((s) => s.kind === SERVER_KIND)!;
    expect(http).toMatchObject({
      name: 'GET /v1/pets/:petId',
      parentSpanId: incoming.parentId,
      attributes: expect.objectContaining({
        'http.route': '/v1/pets/:petId',
        'http.request.method': 'GET',
        'http.response.status_code': 200,
      }),
    });
    expect(answer.headers?.traceparent).toBe(`00-${incoming.traceId}-${http.spanId}-01`);
    const children = spans.filter((s) => s !== http && !isKeyLookup(s));
    expect(children.map((s) => [s.name, s.parentSpanId]).sort()).toEqual(
      [
        ['ApiKeyGuard', http.spanId],
        ['SELECT pets', http.spanId],
        // getPet is deprecated: the key's first call of it is written down (ApiKeyUsage).
        ['UPDATE api_keys', http.spanId],
      ].sort(),
    );
    const query = children.find((s) => s.name === 'SELECT pets')!;
    expect(query.attributes).toMatchObject({
      'db.system.name': engine === 'postgres' ? 'postgresql' : 'sqlite',
      'db.query.text': expect.stringMatching(
        /^SELECT p\.id, p\.name, p\.category_id, p\.status, p\.revision FROM pets p WHERE p\.id = (\?|\$1)$/,
      ),
    });
  });

  it('traces an order and its completion by route, with the statements holding the pet and the order', async () => {
    const pet = (await client.post('/v1/pets', { name: 'Tom', categoryId: 1, status: 'available' }))
      .body as { id: number };
    const place = traceparent();
    const placed = await client.post(
      '/v1/orders',
      { petId: pet.id },
      { traceparent: place.header },
    );
    expect(placed.status).toBe(201);
    const complete = traceparent();
    const orderId = (placed.body as { id: number }).id;
    expect(
      (
        await client.post(`/v1/orders/${orderId}/complete`, undefined, {
          traceparent: complete.header,
        })
      ).status,
    ).toBe(200);

    const shape = async (traceId: string, count: number) => {
      const spans = await spansOfTrace(traceId, count);
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '')?.name ?? null;
      return spans
        .filter((span) => !isKeyLookup(span))
        .map((span) => [span.name, parentOf(span)])
        .sort();
    };
    // On PostgreSQL each change is one statement; on SQLite a transaction of three.
    const changed = (route: string, statements: string[]) =>
      engine === 'postgres'
        ? [[statements.join(' + '), route]]
        : [['transaction', route], ...statements.map((statement) => [statement, 'transaction'])];
    const order = 'POST /v1/orders';
    expect(await shape(place.traceId, engine === 'postgres' ? 3 : 6)).toEqual(
      [
        [order, null],
        ['ApiKeyGuard', order],
        ...changed(order, ['UPDATE pets', 'INSERT orders', 'INSERT pet_events']),
      ].sort(),
    );
    // The conditional close comes first: no read of the order before it.
    const close = 'POST /v1/orders/:orderId/complete';
    expect(await shape(complete.traceId, engine === 'postgres' ? 3 : 6)).toEqual(
      [
        [close, null],
        ['ApiKeyGuard', close],
        ...changed(close, ['UPDATE orders', 'UPDATE pets', 'INSERT pet_events']),
      ].sort(),
    );
  });

  it('traces a create with its transaction and its three statements, and an unmatched path by method alone', async () => {
    const create = traceparent();
    expect(
      (
        await client.post(
          '/v1/pets',
          { name: 'Bella', categoryId: 2 },
          { traceparent: create.header, 'Idempotency-Key': 'trace-1' },
        )
      ).status,
    ).toBe(201);
    const spans = await spansOfTrace(create.traceId, engine === 'postgres' ? 5 : 6);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId ?? '')?.name ?? null;
    const spansButKeyLookups = spans.filter((span) => !isKeyLookup(span));
    expect(spansButKeyLookups.map((span) => [span.name, parentOf(span)]).sort()).toEqual(
      [
        ['POST /v1/pets', null],
        ['ApiKeyGuard', 'POST /v1/pets'],
        ['transaction', 'POST /v1/pets'],
        // PostgreSQL writes the pet and its event in one statement, SQLite in two.
        ...(engine === 'postgres'
          ? [['INSERT pets + INSERT pet_events', 'transaction']]
          : [
              ['INSERT pets', 'transaction'],
              ['INSERT pet_events', 'transaction'],
            ]),
        ['INSERT idempotency_keys', 'transaction'],
      ].sort(),
    );
    expect(spans.find((span) => span.kind === SERVER_KIND)?.parentSpanId).toBe(create.parentId);

    const unmatched = traceparent();
    await client.get('/v1/secret/4711', { traceparent: unmatched.header });
    const [span] = await spansOfTrace(unmatched.traceId, 1);
    expect(span.name).toBe('GET');
  });

  it('links the request that serves an event to the request that made the change', async () => {
    const create = traceparent();
    const created = await client.post(
      '/v1/pets',
      { name: 'Linked', categoryId: 3 },
      { traceparent: create.header },
    );
    expect(created.status).toBe(201);
    const createSpan = await serverSpanOf(create.traceId);
    const feed = traceparent();
    const events = await client.get('/v1/events?limit=100', { traceparent: feed.header });
    const { id } = created.body as { id: number };
    // The feed also holds the order and category events other tests here make, without a pet.
    const served = (events.body as { type: string; data: { pet?: { id: number } } }[]).find(
      (event) => event.data.pet?.id === id,
    )!;
    expect(served.type).toBe('pet.created');
    const feedSpan = await serverSpanOf(feed.traceId);
    expect(feedSpan.name).toBe('GET /v1/events');
    expect(feedSpan.links).toContain(`${create.traceId}/${createSpan.spanId}`);
  });

  it('links each batch a stream is sent to the requests that made its events', async () => {
    const stream = await openEventStream(`${server.baseUrl}/v1/events/stream`, {
      authorization: `Bearer ${key}`,
    });
    try {
      await waitFor(() => stream.messages.length > 0, 10_000);
      const create = traceparent();
      const created = await client.post(
        '/v1/pets',
        { name: 'Streamed', categoryId: 4 },
        { traceparent: create.header },
      );
      const [sent] = await stream.events(1);
      expect(JSON.parse(sent.data!).data.pet.id).toBe((created.body as { id: number }).id);
      const createSpan = await serverSpanOf(create.traceId);
      const link = `${create.traceId}/${createSpan.spanId}`;
      await waitFor(
        () => receiver.spans.some((s) => s.name === 'send events' && s.links.includes(link)),
        10_000,
      );
    } finally {
      stream.close();
    }
  });

  it('sends each webhook attempt in a trace of its own, linked to the request that made the change', async () => {
    const hooks = await WebhookReceiver.start();
    const manager = (
      await runApiKeyCli(['create', 'hooks', '--scopes', 'webhooks:manage'], database.url)
    ).stdout.trim();
    const managing = apiClient(server.baseUrl, manager);
    try {
      hooks.answer = (_delivery, index) => ({ status: index === 0 ? 503 : 204 });
      const subscribed = await managing.post('/v1/webhooks', { url: hooks.url });
      expect(subscribed.status).toBe(201);
      const subscriptionId = (subscribed.body as { id: number }).id;
      const create = traceparent();
      expect(
        (
          await client.post(
            '/v1/pets',
            { name: 'Hooked', categoryId: 5 },
            { traceparent: create.header },
          )
        ).status,
      ).toBe(201);
      await hooks.waitFor(2);
      const createSpan = await serverSpanOf(create.traceId);
      const link = `${create.traceId}/${createSpan.spanId}`;
      const isAttempt = (s: ReceivedSpan) => s.name === 'send webhook' && s.links.includes(link);
      await waitFor(() => receiver.spans.filter(isAttempt).length === 2, 10_000);

      const attempts = receiver.spans.filter(isAttempt);
      const eventId = hooks.ids[0];
      expect(attempts).toEqual([
        expect.objectContaining({
          kind: CLIENT_KIND,
          parentSpanId: undefined,
          links: [link],
          attributes: {
            'animal_store.webhook.subscription_id': subscriptionId,
            'animal_store.webhook.event_id': eventId,
            'animal_store.webhook.attempt': 1,
            'http.response.status_code': 503,
          },
        }),
        expect.objectContaining({
          kind: CLIENT_KIND,
          parentSpanId: undefined,
          links: [link],
          attributes: {
            'animal_store.webhook.subscription_id': subscriptionId,
            'animal_store.webhook.event_id': eventId,
            'animal_store.webhook.attempt': 2,
            'http.response.status_code': 204,
          },
        }),
      ]);
      // Each a trace of one span: the worker's statements stay untraced.
      const traces = attempts.map(({ traceId }) => traceId);
      expect(new Set([create.traceId, ...traces]).size).toBe(3);
      for (const traceId of traces)
        expect(receiver.spans.filter((s) => s.traceId === traceId)).toHaveLength(1);
    } finally {
      managing.close();
      await hooks.close();
    }
  });

  it('puts the trace id in the request log line', async () => {
    const incoming = traceparent();
    await client.get('/v1/pets?limit=1', { traceparent: incoming.header });
    await waitFor(() =>
      logLines(server).some((line) => line.msg === 'request' && line.traceId === incoming.traceId),
    );
  });
});

describe.skipIf(!ENGINES.includes('postgres'))('a 5xx with tracing on [postgres]', () => {
  it('logs the failure with the trace id of its request', async () => {
    const cluster = await startPgCluster();
    const receiver = await startOtlpReceiver();
    const server = await startServer({
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: cluster.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      ...TRACING_ENV,
    });
    try {
      const key = (await runApiKeyCli(['create', 'tracing'], cluster.url)).stdout.trim();
      const client = apiClient(server.baseUrl, key);
      await cluster.stop('immediate');
      const incoming = traceparent();
      const answer = await client.post(
        '/v1/pets',
        { name: 'Rex', categoryId: 1 },
        {
          traceparent: incoming.header,
        },
      );
      client.close();
      expect(answer.status).toBe(503);
      await waitFor(() =>
        logLines(server).some(
          (line) => line.level === 'error' && line.traceId === incoming.traceId,
        ),
      );
    } finally {
      server.child.kill('SIGKILL');
      await receiver.close();
      await cluster.destroy();
    }
  }, 60_000);
});
