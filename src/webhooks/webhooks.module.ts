import { Module } from '@nestjs/common';
import { Dispatcher } from 'undici';
import { EventsModule } from '../events/events.module.js';
import { Clock } from '../time/clock.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveryWorker } from './webhook-delivery-worker.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';
import { WebhookTargetPolicy } from './webhook-target-policy.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Signed webhooks: subscriptions to the change log (docs/events.md, "Webhooks"). */
@Module({
  imports: [EventsModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookSubscriptionsRepository,
    WebhookTargetPolicy,
    WebhookDeliveriesRepository,
    WebhookDeliveryWorker,
    WebhookMetrics,
    WebhookSender,
    WebhookDispatcher,
    // How the sender connects: through the dispatcher that checks each target address.
    {
      provide: Dispatcher,
      useFactory: (guarded: WebhookDispatcher) => guarded.agent,
      inject: [WebhookDispatcher],
    },
    Clock,
  ],
})
export class WebhooksModule {}
