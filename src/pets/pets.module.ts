import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { Clock } from '../time/clock.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@Module({
  // The sunset guard notes which API key called a deprecated operation.
  imports: [AuthModule],
  controllers: [PetsController],
  providers: [PetsService, PetsRepository, Clock],
})
export class PetsModule {}
