import { Injectable } from '@nestjs/common';
import {
  HealthCheckService,
  type HealthCheckResult,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/** A readiness probe that hangs is as bad as a failed one: give up after this long. */
const DATABASE_PING_TIMEOUT_MS = 1_000;

/** Whether this instance can serve API requests: its database answers. */
@Injectable()
export class ReadinessCheck {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly dataSource: DataSource,
  ) {}

  /** The probe's answer; throws terminus's 503 when the database does not answer. */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () =>
        this.database.pingCheck('database', {
          connection: this.dataSource,
          timeout: DATABASE_PING_TIMEOUT_MS,
        }),
    ]);
  }

  async isReady(): Promise<boolean> {
    return this.check().then(
      () => true,
      () => false,
    );
  }
}
