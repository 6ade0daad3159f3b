import type { Logger } from 'pino';
import type { AppConfig } from './app-config.js';

/** A protection that the configuration turned off or widened past its production default. */
export interface RelaxedGuard {
  /** The variable that relaxes it, as set. */
  readonly variable: string;
  readonly value: string;
  /** What is no longer prevented. */
  readonly effect: string;
}

/** Ranges that contain every address: a proxy list holding one believes anybody's header. */
const EVERY_ADDRESS = /\/0$/;

/**
 * The guards this configuration relaxes, in the order of the README's "Configuration" table; empty
 * for the production defaults and for the committed `.env`.
 */
export function relaxedGuards(config: AppConfig): RelaxedGuard[] {
  const relaxed: RelaxedGuard[] = [];
  if (config.rateLimitPerMinute === 0) {
    relaxed.push({
      variable: 'RATE_LIMIT_PER_MINUTE',
      value: '0',
      effect: 'requests per API key are not limited',
    });
  }
  if (config.authFailureLimitPerMinute === 0) {
    relaxed.push({
      variable: 'AUTH_FAILURE_LIMIT_PER_MINUTE',
      value: '0',
      effect: 'failed authentications per client address are not limited',
    });
  }
  if (config.trustedProxies.some((range) => EVERY_ADDRESS.test(range))) {
    relaxed.push({
      variable: 'TRUSTED_PROXIES',
      value: config.trustedProxies.join(','),
      effect:
        'X-Forwarded-For is believed from any address, so a client picks the address its failed authentications count against',
    });
  }
  if (config.webhookAllowPrivateTargets) {
    relaxed.push({
      variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      value: 'true',
      effect:
        'webhooks may be sent over plain http to loopback, private and link-local addresses, the cloud metadata service included',
    });
  }
  return relaxed;
}

/**
 * One line per relaxed guard, whatever set it (environment or `.env`): a warning, and an error in
 * production, where none of them belongs unless the operator meant it.
 */
export function logRelaxedGuards(config: AppConfig, logger: Logger): void {
  const production = config.nodeEnv === 'production';
  for (const { variable, value, effect } of relaxedGuards(config)) {
    logger[production ? 'error' : 'warn'](
      { variable, value },
      `Guard relaxed${production ? ' in production' : ''} by ${variable}=${value}: ${effect}`,
    );
  }
}
