import { Module } from '@nestjs/common';
import { InventoryController } from './inventory.controller.js';
import { InventoryFold } from './inventory-fold.js';
import { InventoryRepository } from './inventory.repository.js';
import { InventoryService } from './inventory.service.js';

/** The animals counted by status (docs/api-design.md, "Counting"). */
@Module({
  controllers: [InventoryController],
  providers: [InventoryService, InventoryRepository, InventoryFold],
})
export class InventoryModule {}
