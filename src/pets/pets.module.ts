import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { EventsModule } from '../events/events.module.js';
import { OrdersModule } from '../orders/orders.module.js';
import { Clock } from '../time/clock.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { PetEntity } from './pet.entity.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@Module({
  // The sunset guard notes which API key called a deprecated operation.
  imports: [
    AuthModule,
    EventsModule,
    // A held pet's status is the order's to change (docs/api-design.md, "Orders").
    OrdersModule,
    IdempotencyModule,
    TypeOrmModule.forFeature([PetEntity]),
  ],
  controllers: [PetsController],
  providers: [PetsService, PetsRepository, Clock],
})
export class PetsModule {}
