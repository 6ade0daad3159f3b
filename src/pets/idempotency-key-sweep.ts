import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Clock } from '../time/clock.js';
import { PetsRepository } from './pets.repository.js';

/** How often expired keys are forgotten; a stale one is also freed when it is reused. */
const SWEEP_MS = 60 * 60 * 1000;

/** Forgets the Idempotency-Keys whose 24 hours are over (docs/api-design.md, "Idempotency"). */
@Injectable()
export class IdempotencyKeySweep {
  private readonly logger = new Logger('Pets');

  constructor(
    private readonly pets: PetsRepository,
    private readonly clock: Clock,
  ) {}

  /** Every instance sweeps; the DELETE is idempotent, so overlapping sweeps are harmless. */
  @Interval(SWEEP_MS)
  async forgetExpiredKeys(): Promise<void> {
    try {
      await this.pets.deleteExpiredClaims(this.clock.now());
    } catch (error) {
      this.logger.warn(`expired Idempotency-Keys not swept: ${(error as Error).message}`);
    }
  }
}
