import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Upper bounds in seconds: fine below 100 ms, where the API answers, coarse up to the 30 s timeout. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/**
 * The metrics the request path records into, in a registry of their own (several apps in one test
 * process never share one). Gauges read at scrape time belong to the module that has their data
 * and register here themselves (the database pools, readiness). Labels take values from closed sets
 * only, never from a request (docs/observability.md, "Metrics").
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = new Histogram({
    name: 'animal_store_http_request_duration_seconds',
    help: 'Time from the request arriving to the response being written, by operation.',
    labelNames: ['operation', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly requestsInFlight = new Gauge({
    name: 'animal_store_http_requests_in_flight',
    help: 'Requests received and not yet answered.',
    registers: [this.registry],
  });

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

  readonly databaseQueryDuration = new Histogram({
    name: 'animal_store_db_query_duration_seconds',
    help: 'Time the database took per statement (the pets repository statements and the readiness ping), by statement and by server role.',
    labelNames: ['operation', 'role'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly databaseReadFallbacks = new Counter({
    name: 'animal_store_db_read_fallbacks_total',
    help: 'Reads the primary answered because the read node (DATABASE_READ_URL) failed.',
    registers: [this.registry],
  });

  readonly sunsets = new Gauge({
    name: 'animal_store_operation_sunset_timestamp_seconds',
    help: 'When a deprecated operation stops working (its Sunset header), in Unix seconds.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly deprecatedCalls = new Counter({
    name: 'animal_store_deprecated_calls_total',
    help: 'Calls of deprecated operations, by operation and API key name.',
    labelNames: ['operation', 'api_key'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
