import { Injectable, Logger, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics, WEBHOOK_OUTCOMES, type WebhookOutcome } from '../metrics/metrics.js';
import { untraced } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import {
  type SubscriptionBacklog,
  WebhookDeliveriesRepository,
} from './webhook-deliveries.repository.js';

interface OwedNow {
  id: number;
  owed: number;
  ageSeconds: number;
}

/**
 * The webhook metrics (docs/observability.md, "Webhooks"); each call does nothing without
 * METRICS_PORT. The worker counts its attempts as it makes them. What is owed is read from the
 * database at each scrape, so every instance reports the same, whole backlog whichever instance
 * sends; the series of a deleted subscription go at the scrape after the one that finds it gone.
 */
@Injectable()
export class WebhookMetrics {
  private readonly logger = new Logger('WebhookMetrics');
  private reading?: Promise<OwedNow[]>;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly clock: Clock,
    @Optional() private readonly metrics?: Metrics,
  ) {
    if (metrics) this.registerBacklogGauges(metrics);
  }

  /** One attempt of a delivery to subscription `id`, and how long it took. */
  attempted(id: number, outcome: WebhookOutcome, latencyMs?: number): void {
    const { metrics } = this;
    if (!metrics) return;
    const subscription_id = String(id);
    metrics.webhookAttempts.inc({ subscription_id, outcome });
    if (latencyMs !== undefined)
      metrics.webhookAttemptDuration.observe({ subscription_id }, latencyMs / 1000);
  }

  /** A delivery succeeded: how long after its event committed. */
  delivered(occurredAt: Date, now: Date): void {
    this.metrics?.webhookDeliveryLag.observe((now.getTime() - occurredAt.getTime()) / 1000);
  }

  private registerBacklogGauges(metrics: Metrics): void {
    const backlog = () => this.backlogOfThisScrape(metrics);
    const gauge = (name: string, help: string, valueOf: (owed: OwedNow) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['subscription_id'] as const,
        registers: [metrics.registry],
        async collect() {
          const subscriptions = await backlog();
          this.reset();
          for (const owed of subscriptions)
            this.set({ subscription_id: String(owed.id) }, valueOf(owed));
        },
      });
    gauge(
      'animal_store_webhook_deliveries_owed',
      'Webhook deliveries not yet made nor given up (events after the cursor, failed deliveries awaiting a retry), by enabled subscription id; read from the database at each scrape, the same on every instance.',
      ({ owed }) => owed,
    );
    gauge(
      'animal_store_webhook_oldest_owed_age_seconds',
      'Age of the oldest event an enabled subscription is owed, from its commit, by subscription id; 0 when none is owed. Read with the deliveries owed.',
      ({ ageSeconds }) => ageSeconds,
    );
  }

  /** One read for both gauges: a scrape collects them at once, so the second joins the first's. */
  private backlogOfThisScrape(metrics: Metrics): Promise<OwedNow[]> {
    this.reading ??= this.readBacklog(metrics).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /**
   * The enabled subscriptions' backlog; drops the attempt series of subscriptions deleted since.
   * A database that does not answer gives no series rather than a failed scrape: readiness says so.
   */
  private async readBacklog(metrics: Metrics): Promise<OwedNow[]> {
    let backlog: SubscriptionBacklog[];
    try {
      backlog = await untraced(() => this.deliveries.findBacklog());
    } catch (error) {
      this.logger.warn(`reading the webhook backlog failed: ${(error as Error).message}`);
      return [];
    }
    await this.forgetDeleted(metrics, new Set(backlog.map(({ id }) => String(id))));
    const now = this.clock.now().getTime();
    return backlog
      .filter(({ enabled }) => enabled)
      .map(({ id, owed, oldestOwedAt }) => ({
        id,
        owed,
        ageSeconds: oldestOwedAt ? Math.max(0, (now - oldestOwedAt.getTime()) / 1000) : 0,
      }));
  }

  private async forgetDeleted(metrics: Metrics, existing: Set<string>): Promise<void> {
    const { values } = await metrics.webhookAttempts.get();
    const recorded = new Set(values.map(({ labels }) => String(labels.subscription_id)));
    for (const subscription_id of recorded) {
      if (existing.has(subscription_id)) continue;
      for (const outcome of WEBHOOK_OUTCOMES)
        metrics.webhookAttempts.remove({ subscription_id, outcome });
      metrics.webhookAttemptDuration.remove({ subscription_id });
    }
  }
}
