import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { Clock } from '../time/clock.js';
import { EventRetention } from './event-retention.js';
import { EventStreams } from './event-streams.js';
import { EventsController } from './events.controller.js';
import { EventsService } from './events.service.js';
import { PetEventsRepository } from './pet-events.repository.js';

/** The change log: what every change of a pet writes, and how clients read it (docs/events.md). */
@Module({
  imports: [AuthModule],
  controllers: [EventsController],
  providers: [PetEventsRepository, EventsService, EventRetention, EventStreams, Clock],
  exports: [PetEventsRepository],
})
export class EventsModule {}
