import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { EventsModule } from '../events/events.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { Clock } from '../time/clock.js';
import { OrderExpirySweep } from './order-expiry-sweep.js';
import { OrderMetrics } from './order-metrics.js';
import { OrderEntity } from './order.entity.js';
import { OrdersController } from './orders.controller.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService } from './orders.service.js';
import { PetHolds } from './pet-holds.js';

/**
 * Orders: holds on pets, their sale, release and expiry (docs/api-design.md, "Orders"). Exports
 * `PetHolds`, which the pets feature asks before it changes a pet's status or deletes it.
 */
@Module({
  imports: [AuthModule, EventsModule, IdempotencyModule, TypeOrmModule.forFeature([OrderEntity])],
  controllers: [OrdersController],
  providers: [OrdersService, OrdersRepository, OrderMetrics, OrderExpirySweep, PetHolds, Clock],
  exports: [PetHolds],
})
export class OrdersModule {}
