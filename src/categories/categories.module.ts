import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module.js';
import { Clock } from '../time/clock.js';
import { CategoriesController } from './categories.controller.js';
import { CategoriesRepository } from './categories.repository.js';
import { CategoriesService } from './categories.service.js';
import { CategoryEntity } from './category.entity.js';

/** Names for the category ids pets carry (docs/api-design.md, "The catalogue"). */
@Module({
  imports: [EventsModule, TypeOrmModule.forFeature([CategoryEntity])],
  controllers: [CategoriesController],
  providers: [CategoriesService, CategoriesRepository, Clock],
})
export class CategoriesModule {}
