import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  type HealthCheckResult,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { SqlRunner } from '../database/sql-runner.js';

/** A readiness probe that hangs is as bad as a failed one: give up after this long. */
const DATABASE_PING_TIMEOUT_MS = 1_000;

/** Probes for orchestrators: outside `/v1`, public, not part of the API document. */
@Public()
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly db: SqlRunner,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /**
   * The process can serve API requests: the database answers a read; otherwise 503. Asked on the
   * read path (the read node, falling back to the primary), so while a crashed primary is being
   * replaced the instance stays in the balancer and keeps serving reads; writes meanwhile get their
   * own 503 (docs/deployment.md).
   */
  @Get('ready')
  // No Swagger documentation (the controller is excluded from the document): with it, terminus
  // loads a second, unbundled @nestjs/swagger at start, which cost most of a second.
  @HealthCheck({ swaggerDocumentation: false, noCache: true })
  ready(): Promise<HealthCheckResult> {
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
}
