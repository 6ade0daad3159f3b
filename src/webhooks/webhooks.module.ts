import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { Clock } from '../time/clock.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';
import { WebhookTargetPolicy } from './webhook-target-policy.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Signed webhooks: subscriptions to the change log (docs/events.md, "Webhooks"). */
@Module({
  imports: [EventsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookSubscriptionsRepository, WebhookTargetPolicy, Clock],
})
export class WebhooksModule {}
