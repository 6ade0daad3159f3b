import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DeferredCounter } from './deferred-counter.js';
import { LatencyHistogram } from './latency-histogram.js';

/** Upper bounds in seconds: fine below 100 ms, where the API answers, coarse up to the 30 s timeout. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/**
 * Upper bounds in seconds from an event's commit to its delivery: fine around the first attempt,
 * which should come within a second, coarse over the retry schedule's hours.
 */
const DELIVERY_LAG_BUCKETS = [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400,
];

/** What a webhook delivery attempt came to (docs/observability.md, "Webhooks"). */
export const WEBHOOK_OUTCOMES = ['success', 'failed', 'timeout', 'gave_up', 'disabled'] as const;

export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** The HELP text of each metric (docs/observability.md lists them with their labels). */
const HELP = {
  animal_store_http_request_duration_seconds:
    'Time from the request arriving to the response being written, by operation.',
  animal_store_http_errors_total: 'Error responses, by the code of their Error body.',
  animal_store_rate_limited_requests_total:
    'Requests refused with 429: `api_key` over its per-key budget, `auth_failures` from an address with too many failed authentications.',
  animal_store_auth_failures_total:
    'Requests refused with 401, by reason: missing, malformed, unknown, expired or revoked key.',
  animal_store_idempotent_replays_total:
    'createPet requests answered with the pet of an earlier request with the same Idempotency-Key.',
  animal_store_db_query_duration_seconds:
    'Time the database took per statement (the pets repository statements and the readiness ping), by statement and by server role.',
  animal_store_db_read_fallbacks_total:
    'Reads the primary answered because the read node (DATABASE_READ_URL) failed.',
  animal_store_operation_sunset_timestamp_seconds:
    'When a deprecated operation stops working (its Sunset header), in Unix seconds.',
  animal_store_deprecated_calls_total:
    'Calls of deprecated operations, by operation and API key name.',
  animal_store_events_committed_total:
    'Events committed by this instance with their change, by type (pet.created, order.completed, …).',
  animal_store_event_lag_seconds:
    'Age of the newest event in each answer of the feed and each write to a stream: how far behind readers are served, by reader (feed, stream).',
  animal_store_webhook_attempts_total:
    'Webhook delivery attempts made by this instance, by subscription id and outcome (success, failed, timeout, gave_up, disabled).',
  animal_store_webhook_attempt_duration_seconds:
    'Time from sending a webhook delivery to its answer, or to the failure, by subscription id.',
  animal_store_webhook_delivery_lag_seconds:
    'Time from an event being committed to its webhook delivery succeeding, retries included.',
} as const;

type MetricName = keyof typeof HELP;

/**
 * The metrics the request path records into, in a registry per app. Gauges read at scrape time
 * register here from the module that owns their data (pools, readiness). Label values come from
 * closed sets only, never from a request (docs/observability.md, "Metrics").
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly requestDuration = this.requestPathHistogram(
    'animal_store_http_request_duration_seconds',
    ['operation', 'method', 'status_class'],
  );
  readonly errors = this.counter('animal_store_http_errors_total', ['code']);
  readonly rateLimited = this.counter('animal_store_rate_limited_requests_total', ['limit']);
  readonly authFailures = this.counter('animal_store_auth_failures_total', ['reason']);
  readonly idempotentReplays = this.counter('animal_store_idempotent_replays_total');
  readonly databaseQueryDuration = this.requestPathHistogram(
    'animal_store_db_query_duration_seconds',
    ['operation', 'role'],
  );
  readonly databaseReadFallbacks = this.counter('animal_store_db_read_fallbacks_total');
  readonly sunsets = this.gauge('animal_store_operation_sunset_timestamp_seconds', ['operation']);
  readonly deprecatedCalls = new DeferredCounter(
    'animal_store_deprecated_calls_total',
    HELP.animal_store_deprecated_calls_total,
    ['operation', 'api_key'],
    this.registry,
  );
  readonly eventsCommitted = this.counter('animal_store_events_committed_total', ['type']);
  readonly eventLag = this.histogram('animal_store_event_lag_seconds', ['reader']);
  readonly webhookAttempts = this.counter('animal_store_webhook_attempts_total', [
    'subscription_id',
    'outcome',
  ]);
  readonly webhookAttemptDuration = this.histogram(
    'animal_store_webhook_attempt_duration_seconds',
    ['subscription_id'],
  );
  readonly webhookDeliveryLag = this.histogram(
    'animal_store_webhook_delivery_lag_seconds',
    [],
    DELIVERY_LAG_BUCKETS,
  );

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition format of every metric: the registry's, then the request path's histograms. */
  async exposition(): Promise<string> {
    const histograms = [this.requestDuration, this.databaseQueryDuration];
    return [await this.registry.metrics(), ...histograms.map((h) => `${h.exposition()}\n`)].join(
      '\n',
    );
  }

  private counter<L extends string>(name: MetricName, labelNames: readonly L[] = []) {
    return new Counter({ name, help: HELP[name], labelNames, registers: [this.registry] });
  }

  private gauge<L extends string>(name: MetricName, labelNames: readonly L[] = []) {
    return new Gauge({ name, help: HELP[name], labelNames, registers: [this.registry] });
  }

  /** Observed per request or per statement: kept outside the registry, as latency-histogram.ts says. */
  private requestPathHistogram<L extends string>(name: MetricName, labelNames: readonly L[]) {
    return new LatencyHistogram(name, HELP[name], labelNames, LATENCY_BUCKETS);
  }

  /**
   * The latency histograms share one set of buckets, so their quantiles compare; the webhook
   * delivery lag, which spans the retry schedule, has its own.
   */
  private histogram<L extends string>(
    name: MetricName,
    labelNames: readonly L[],
    buckets = LATENCY_BUCKETS,
  ) {
    return new Histogram({
      name,
      help: HELP[name],
      labelNames,
      buckets,
      registers: [this.registry],
    });
  }
}
