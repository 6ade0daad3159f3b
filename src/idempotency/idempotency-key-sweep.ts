import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Clock } from '../time/clock.js';
import { sweep } from '../time/sweep.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';

/** How often expired keys are forgotten; a stale one is also freed when it is reused. */
const SWEEP_MS = 60 * 60 * 1000;

/** Forgets the Idempotency-Keys whose 24 hours are over (docs/api-design.md, "Idempotency"). */
@Injectable()
export class IdempotencyKeySweep {
  constructor(
    private readonly claims: IdempotencyKeysRepository,
    private readonly clock: Clock,
  ) {}

  /** Every instance sweeps; the DELETE is idempotent, so overlapping sweeps are harmless. */
  @Interval(SWEEP_MS)
  forgetExpiredKeys(): Promise<void> {
    return sweep('Idempotency', 'expired Idempotency-Keys', () =>
      this.claims.deleteExpiredClaims(this.clock.now()),
    );
  }
}
