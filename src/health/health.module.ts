import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';
import { ReadinessCheck } from './readiness-check.js';
import { ReadinessGauge } from './readiness.gauge.js';

@Module({
  // Failed checks are answered by our exception filter; terminus's own error log would repeat it.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ReadinessCheck, ReadinessGauge],
})
export class HealthModule {}
