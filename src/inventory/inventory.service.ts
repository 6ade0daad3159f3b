import { Injectable } from '@nestjs/common';
import type { InventoryDto } from './dto/inventory.dto.js';
import { EVERY_CATEGORY, InventoryRepository } from './inventory.repository.js';

@Injectable()
export class InventoryService {
  constructor(private readonly inventory: InventoryRepository) {}

  /** The pets by status, of one category or of all (docs/api-design.md, "Counting"). */
  async count(categoryId = EVERY_CATEGORY): Promise<InventoryDto> {
    const counts = await this.inventory.countByStatus(categoryId);
    const available = counts.get('available') ?? 0;
    const pending = counts.get('pending') ?? 0;
    const sold = counts.get('sold') ?? 0;
    const unspecified = counts.get('none') ?? 0;
    return {
      available,
      pending,
      sold,
      unspecified,
      total: available + pending + sold + unspecified,
    };
  }
}
