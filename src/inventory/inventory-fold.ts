import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { sweep } from '../time/sweep.js';
import { InventoryRepository } from './inventory.repository.js';

/**
 * How often the appended count changes are folded into the counts: a count reads the changes not
 * folded yet, so this bounds what it adds up (docs/api-design.md, "Counting").
 */
const FOLD_INTERVAL_MS = 1000;

/** Keeps `pet_count_changes` short; every instance tries, one folds at a time. */
@Injectable()
export class InventoryFold {
  private running?: Promise<void>;

  constructor(private readonly inventory: InventoryRepository) {}

  @Interval(FOLD_INTERVAL_MS)
  async fold(): Promise<void> {
    // A slow fold is not stacked on: the next tick after it ends folds what came meanwhile.
    if (this.running) return;
    this.running = sweep('Inventory', 'pet count changes', () => this.inventory.fold());
    await this.running.finally(() => (this.running = undefined));
  }
}
