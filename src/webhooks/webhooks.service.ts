import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { notFound, validationFailed, webhookLimitReached } from '../errors/api-error.js';
import { EVENT_TYPES } from '../events/pet-event.js';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { Clock } from '../time/clock.js';
import type { NewWebhookDto } from './dto/new-webhook.dto.js';
import type { WebhookDto } from './dto/webhook.dto.js';
import type { WebhookWithSecretDto } from './dto/webhook-with-secret.dto.js';
import { WebhookDeliveryWorker } from './webhook-delivery-worker.js';
import { newWebhookSecret, PREVIOUS_SECRET_OVERLAP_MS } from './webhook-secret.js';
import {
  MAX_WEBHOOKS,
  SUBSCRIPTION_READ_HOLDS_MS,
  type WebhookSubscription,
} from './webhook-subscription.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';
import { WebhookTargetPolicy } from './webhook-target-policy.js';

/**
 * Webhook subscriptions (docs/events.md, "Webhooks"): one set for the store, managed by any key
 * with `webhooks:manage`. A secret leaves the service only in the answer that made it.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly events: PetEventsRepository,
    private readonly targets: WebhookTargetPolicy,
    private readonly worker: WebhookDeliveryWorker,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a subscription owed every matching event committed from now on; 409 when the store
   * has MAX_WEBHOOKS already.
   */
  async create({ url, events }: NewWebhookDto): Promise<WebhookWithSecretDto> {
    const refusal = this.targets.checkUrl(url);
    if (refusal !== undefined) throw validationFailed(refusal);
    const target = new URL(url);
    const secret = newWebhookSecret();
    const id = await this.subscriptions.create(
      {
        url: target.href,
        // In the order of EVENT_TYPES, so equal filters are stored and shown alike.
        eventTypes: events ? EVENT_TYPES.filter((type) => events.includes(type)) : null,
        secret,
        createdAt: this.clock.now(),
        after: await this.events.findNewestPositionOnPrimary(),
      },
      MAX_WEBHOOKS,
    );
    if (id === undefined) throw webhookLimitReached(MAX_WEBHOOKS);
    this.worker.subscriptionCreated();
    return withSecret(await this.get(id), secret);
  }

  async list(): Promise<WebhookDto[]> {
    return (await this.subscriptions.findAll()).map(toWebhookDto);
  }

  async get(id: number): Promise<WebhookDto> {
    const subscription = await this.subscriptions.findById(id);
    if (!subscription) throw noSuchWebhook(id);
    return toWebhookDto(subscription);
  }

  /**
   * Deletes the webhook. One whose lease a worker held is answered SUBSCRIPTION_READ_HOLDS_MS
   * after the commit: a worker, on any instance, starts attempts only within that long of a read
   * of the subscription, so once this answers nothing more is sent to it but the attempt under
   * way (docs/events.md, "How deliveries are owed and sent").
   */
  async delete(id: number): Promise<void> {
    const deleted = await this.subscriptions.delete(id);
    if (!deleted) throw noSuchWebhook(id);
    if (deleted.leased) await waitAtLeast(SUBSCRIPTION_READ_HOLDS_MS);
  }

  /** A new secret; the one it replaces still signs deliveries for 24 hours. */
  async rotateSecret(id: number): Promise<WebhookWithSecretDto> {
    const secret = newWebhookSecret();
    const previousExpiresAt = new Date(this.clock.now().getTime() + PREVIOUS_SECRET_OVERLAP_MS);
    if (!(await this.subscriptions.rotateSecret(id, secret, previousExpiresAt)))
      throw noSuchWebhook(id);
    return withSecret(await this.get(id), secret);
  }
}

const noSuchWebhook = (id: number) => notFound(`No webhook with id ${id}`);

/** Waits `ms` of real time: a timer can fire early by the time its turn of the loop had run. */
async function waitAtLeast(ms: number): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0; left = until - performance.now()) await sleep(Math.ceil(left));
}

function toWebhookDto(subscription: WebhookSubscription): WebhookDto {
  return {
    id: subscription.id,
    url: subscription.url,
    events: subscription.eventTypes,
    createdAt: subscription.createdAt.toISOString(),
    disabled: subscription.disabledAt !== null,
    lastSuccessAt: subscription.lastSuccessAt?.toISOString() ?? null,
    lastFailureAt: subscription.lastFailureAt?.toISOString() ?? null,
    lastFailureReason: subscription.lastFailureReason,
    pendingDeliveries: subscription.pendingDeliveries,
    givenUpDeliveries: subscription.givenUpDeliveries,
  };
}

function withSecret(
  { id, url, events, createdAt }: WebhookDto,
  secret: string,
): WebhookWithSecretDto {
  return { id, url, events, createdAt, secret };
}
