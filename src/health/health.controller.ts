import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { ReadinessCheck } from './readiness-check.js';

/** Probes for orchestrators: outside `/v1`, public, not part of the API document. */
@Public()
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessCheck) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** The process can serve API requests (ReadinessCheck); otherwise 503. */
  @Get('ready')
  // The controller is not in the document, and terminus's own Swagger docs would load a second,
  // unbundled @nestjs/swagger at start (docs/performance.md, "The build").
  @HealthCheck({ swaggerDocumentation: false, noCache: true })
  ready(): Promise<HealthCheckResult> {
    return this.readiness.check();
  }
}
