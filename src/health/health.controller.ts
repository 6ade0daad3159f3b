import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  type HealthCheckResult,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';

/** A readiness probe that hangs is as bad as a failed one: give up after this long. */
const DATABASE_PING_TIMEOUT_MS = 1_000;

/** Probes for orchestrators: outside `/v1`, public, not part of the API document. */
@Public()
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly dataSource: DataSource,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** The process can serve API requests: the database answers; otherwise 503. */
  @Get('ready')
  // No Swagger documentation (the controller is excluded from the document): with it, terminus
  // loads a second, unbundled @nestjs/swagger at start, which cost most of a second.
  @HealthCheck({ swaggerDocumentation: false, noCache: true })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () =>
        this.database.pingCheck('database', {
          connection: this.dataSource,
          timeout: DATABASE_PING_TIMEOUT_MS,
        }),
    ]);
  }
}
