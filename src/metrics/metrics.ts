import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { RequestPathHistogram } from './request-path-histogram.js';

export interface PoolStats {
  role: 'primary' | 'replica';
  total: number;
  idle: number;
  waiting: number;
}

/** Upper bounds in seconds: fine below 100 ms, where the API answers, coarse up to the 30 s timeout. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/**
 * Every metric the service exposes, in a registry of its own (several apps in one test process
 * never share one). Labels take values from closed sets only, never from a request: operation ids
 * of the document, Error codes, API key names chosen by operators (docs/observability.md, "Metrics").
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = new RequestPathHistogram(
    'animal_store_http_request_duration_seconds',
    'Time from the request arriving to the response being written, by operation.',
    ['operation', 'method', 'status_class'],
    LATENCY_BUCKETS,
  );

  readonly errors = new Counter({
    name: 'animal_store_http_errors_total',
    help: 'Error responses, by the code of their Error body.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'animal_store_rate_limited_requests_total',
    help: 'Requests refused with 429: `api_key` over its per-key budget, `auth_failures` from an address with too many failed authentications.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly authFailures = new Counter({
    name: 'animal_store_auth_failures_total',
    help: 'Requests refused with 401, by reason: missing, malformed, unknown, expired or revoked key.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly idempotentReplays = new Counter({
    name: 'animal_store_idempotent_replays_total',
    help: 'createPet requests answered with the pet of an earlier request with the same Idempotency-Key.',
    registers: [this.registry],
  });

  readonly databaseQueryDuration = new RequestPathHistogram(
    'animal_store_db_query_duration_seconds',
    'Time the database took per statement (the pets repository statements and the readiness ping), by statement and by server role.',
    ['operation', 'role'],
    LATENCY_BUCKETS,
  );

  readonly databaseReadFallbacks = new Counter({
    name: 'animal_store_db_read_fallbacks_total',
    help: 'Reads the primary answered because the read node (DATABASE_READ_URL) failed.',
    registers: [this.registry],
  });

  private poolStats: () => PoolStats[] = () => [];

  readonly sunsets = new Gauge({
    name: 'animal_store_operation_sunset_timestamp_seconds',
    help: 'When a deprecated operation stops working (its Sunset header), in Unix seconds.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  /**
   * Deprecated calls not yet handed to the counter, by operation and key name: each getPet adds one
   * here, and the counter takes them at scrape time, because prom-client's `inc` validates and
   * hashes a label object on every call (docs/performance.md, "Metrics on").
   */
  private readonly pendingDeprecatedCalls = new Map<string, PendingCount>();

  private isReady: () => Promise<boolean> = () => Promise.resolve(false);
  private countInFlight: () => number = () => 0;

  constructor() {
    const isReady = () => this.isReady();
    new Gauge({
      name: 'animal_store_ready',
      help: '1 when the instance can serve API requests (its database answers), as /health/ready says; checked at each scrape.',
      registers: [this.registry],
      async collect() {
        this.set((await isReady()) ? 1 : 0);
      },
    });
    const countInFlight = () => this.countInFlight();
    new Gauge({
      name: 'animal_store_http_requests_in_flight',
      help: 'Requests received and not yet answered.',
      registers: [this.registry],
      collect() {
        this.set(countInFlight());
      },
    });
    const pendingDeprecatedCalls = this.pendingDeprecatedCalls;
    new Counter({
      name: 'animal_store_deprecated_calls_total',
      help: 'Calls of deprecated operations, by operation and API key name.',
      labelNames: ['operation', 'api_key'] as const,
      registers: [this.registry],
      collect() {
        for (const pending of pendingDeprecatedCalls.values()) {
          if (pending.count === 0) continue;
          this.inc(pending.labels, pending.count);
          pending.count = 0;
        }
      },
    });
    const readPools = () => this.poolStats();
    new Gauge({
      name: 'animal_store_db_pool_connections',
      help: 'PostgreSQL connections of this instance, by pool role and state (total, idle, waiting requests).',
      labelNames: ['role', 'state'] as const,
      registers: [this.registry],
      collect() {
        for (const { role, total, idle, waiting } of readPools()) {
          this.set({ role, state: 'total' }, total);
          this.set({ role, state: 'idle' }, idle);
          this.set({ role, state: 'waiting' }, waiting);
        }
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Every metric in the text exposition format: the registry's, then the request-path histograms. */
  async exposition(): Promise<string> {
    return [
      await this.registry.metrics(),
      this.requestDuration.exposition(),
      this.databaseQueryDuration.exposition(),
    ].join('\n');
  }

  /** One authenticated call of a deprecated operation by the key named `apiKey`. */
  countDeprecatedCall(operation: string, apiKey: string): void {
    const key = `${operation}\u0000${apiKey}`;
    const pending = this.pendingDeprecatedCalls.get(key);
    if (pending) pending.count++;
    else this.pendingDeprecatedCalls.set(key, { labels: { operation, api_key: apiKey }, count: 1 });
  }

  /** Where the in-flight gauge reads from at each scrape (http-metrics.ts). */
  observeRequestsInFlight(count: () => number): void {
    this.countInFlight = count;
  }

  /** What the readiness gauge asks at each scrape (metrics-server.ts). */
  observeReadiness(isReady: () => Promise<boolean>): void {
    this.isReady = isReady;
  }

  /** Where the pool gauge reads from at each scrape; PostgreSQL only (database.module.ts). */
  observePools(stats: () => PoolStats[]): void {
    this.poolStats = stats;
  }
}

interface PendingCount {
  labels: { operation: string; api_key: string };
  count: number;
}
