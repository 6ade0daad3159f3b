import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/app-config.js';
import { BatchedStdout } from './batched-stdout.js';

/**
 * One JSON logger for the process: Fastify's request lines and Nest's messages. No `redact`: the
 * request log picks its fields, so no header or key is ever logged (docs/performance.md says
 * what redaction cost). Lines go to stdout once per event-loop turn (`BatchedStdout`).
 */
export function createLogger(level: LogLevel): Logger {
  const options = {
    level,
    base: undefined,
    timestamp: isoTimeOfThisMillisecond(),
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(options, new BatchedStdout());
}

/**
 * pino's `isoTime`, formatted once a millisecond: under load many lines share one, and formatting a
 * date is a sizeable part of a request line's cost.
 */
export function isoTimeOfThisMillisecond(): () => string {
  let formattedAt = NaN;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== formattedAt) {
      formattedAt = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

/** Lets Nest (bootstrap, lifecycle, `new Logger()` in our code) write through pino. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  /**
   * Nest logs its start-up chatter (modules initialised, routes mapped) at `log`: kept at debug, so
   * at info the log is one line per request plus what needs attention.
   */
  log(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    // Nest passes (message, stack?, context?).
    const stack = params.length > 1 && typeof params[0] === 'string' ? params[0] : undefined;
    this.write('error', message, params, stack);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    params: unknown[],
    stack?: string,
  ): void {
    const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ context, ...message });
    } else {
      this.logger[level]({ context, stack }, String(message));
    }
  }
}
