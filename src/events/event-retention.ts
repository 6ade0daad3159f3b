import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { Clock } from '../time/clock.js';
import { sweep } from '../time/sweep.js';
import { PetEventsRepository } from './pet-events.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often old events are deleted: a follower's cursor outlives the period by at most this. */
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

/** Keeps EVENT_RETENTION_DAYS of events (docs/events.md, "Retention"). */
@Injectable()
export class EventRetention {
  constructor(
    private readonly events: PetEventsRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Every instance sweeps; the repository makes concurrent sweeps run one at a time. */
  @Interval(RETENTION_SWEEP_MS)
  deleteExpiredEvents(): Promise<void> {
    const cutoff = new Date(this.clock.now().getTime() - this.config.eventRetentionDays * DAY_MS);
    return sweep('Events', 'expired events', () => this.events.deleteOlderThan(cutoff));
  }
}
