import { Injectable } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import type { SqlTransaction } from '../database/sql-runner.js';
import { Clock } from '../time/clock.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService } from './orders.service.js';
import type { PetHold } from './pet-hold.js';

/**
 * What the pets feature asks of orders before it changes a pet (docs/api-design.md, "Orders"):
 * a hold ends exactly at its deadline for every write, and while it lasts the pet's status is
 * the order's to change.
 */
@Injectable()
export class PetHolds {
  constructor(
    private readonly orders: OrdersService,
    private readonly repository: OrdersRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The pet's hold now, a lapsed one released first. Only a pending pet can be held, so a caller
   * that has read the pet asks only then. A write decided on `held` or `free` must be made at the
   * revision of the pet it read: every order change moves that revision, so no hold starts or
   * ends unnoticed in between.
   */
  holdOf(petId: number): Promise<PetHold> {
    return this.orders.holdOf(petId, this.clock.now());
  }

  /**
   * The same, read inside `transaction`, which has locked the pet's row so no order of it changes
   * meanwhile; `lapsed` when a hold's deadline has passed: roll back, release it with `holdOf`,
   * and start again, as its release needs the row.
   */
  async holdWhileLocked(
    transaction: SqlTransaction,
    petId: number,
  ): Promise<'held' | 'free' | 'lapsed'> {
    const open = await this.repository.findOpenOfPetIn(transaction, petId);
    if (!open) return 'free';
    return open.expiresAt > this.clock.now() ? 'held' : 'lapsed';
  }
}

/** The 409 of a change a hold forbids: a status change or a deletion of a held pet. */
export function petHeld(petId: number): ApiError {
  return new ApiError('PET_HELD', petHeldMessage(petId));
}

export function petHeldMessage(petId: number): string {
  return `Pet ${petId} is held by an open order: complete or cancel the order first`;
}
