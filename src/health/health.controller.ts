import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';

/** A readiness probe that hangs is as bad as a failed one: give up after this long. */
const DATABASE_PING_TIMEOUT_MS = 1_000;

/** Probes for orchestrators: outside `/v1`, public, not part of the API document. */
@Public()
@ApiExcludeController()
@Controller('health')
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** The process can serve API requests: the database answers. */
  @Get('ready')
  async ready() {
    const startedAt = performance.now();
    if (!(await this.databaseAnswers())) throw new ServiceUnavailableException();
    return {
      status: 'ok',
      database: { status: 'up', responseTimeMs: Math.round(performance.now() - startedAt) },
    };
  }

  private async databaseAnswers(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>(
      (resolve) => (timer = setTimeout(resolve, DATABASE_PING_TIMEOUT_MS, false)),
    );
    const ping = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
