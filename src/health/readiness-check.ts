import { Injectable } from '@nestjs/common';
import {
  HealthCheckService,
  type HealthCheckResult,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { SqlRunner } from '../database/sql-runner.js';

/** A readiness probe that hangs is as bad as a failed one: give up after this long. */
const DATABASE_PING_TIMEOUT_MS = 1_000;

/**
 * Whether this instance can serve API requests: the database answers a read, on the read path, so
 * while a crashed primary is replaced the instance stays in the balancer serving reads
 * (docs/deployment.md).
 */
@Injectable()
export class ReadinessCheck {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly db: SqlRunner,
  ) {}

  /** The probe's answer; throws terminus's 503 when the database does not answer. */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.db.read('SELECT 1', []);
          })
          .withTimeout(DATABASE_PING_TIMEOUT_MS),
    ]);
  }

  async isReady(): Promise<boolean> {
    return this.check().then(
      () => true,
      () => false,
    );
  }
}
