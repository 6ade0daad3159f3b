import { Injectable, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics.js';
import { ReadinessCheck } from './readiness-check.js';

/** The readiness probe's answer as a metric, asked at each scrape (docs/observability.md). */
@Injectable()
export class ReadinessGauge {
  constructor(readiness: ReadinessCheck, @Optional() metrics?: Metrics) {
    if (!metrics) return;
    new Gauge({
      name: 'animal_store_ready',
      help: '1 when the instance can serve API requests (its database answers), as /health/ready says; checked at each scrape.',
      registers: [metrics.registry],
      async collect() {
        this.set((await readiness.isReady()) ? 1 : 0);
      },
    });
  }
}
