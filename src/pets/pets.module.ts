import { Module } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@Module({
  controllers: [PetsController],
  providers: [PetsService, PetsRepository, Clock],
})
export class PetsModule {}
