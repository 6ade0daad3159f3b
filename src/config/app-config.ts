import { existsSync } from 'node:fs';
import { isIP } from 'node:net';

export const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The window of the per-minute limits, `RATE_LIMIT_PER_MINUTE` and `AUTH_FAILURE_LIMIT_PER_MINUTE`
 * (docs/api-design.md, "Rate limits").
 */
export const LIMIT_WINDOW_MS = 60_000;

export type DatabaseConfig =
  | { readonly type: 'sqlite'; readonly path: string }
  | {
      readonly type: 'postgres';
      readonly url: string;
      /** Where reads go (a standby, or a balancer over standbys); undefined: to `url` as well. */
      readonly readUrl?: string;
    };

/** Validated runtime configuration; also the DI token under which Nest provides it. */
export class AppConfig {
  readonly nodeEnv!: NodeEnv;
  readonly host!: string;
  readonly port!: number;
  readonly database!: DatabaseConfig;
  readonly logLevel!: LogLevel;
  readonly publicBaseUrl!: string;
  readonly stagingBaseUrl!: string;
  readonly bodyLimitBytes!: number;
  /** Requests per API key per minute; 0 turns rate limiting off. */
  readonly rateLimitPerMinute!: number;
  /** Where replicas share rate-limit counters; undefined: each process counts alone. */
  readonly redisUrl?: string;
  /** The Prometheus listener's port; undefined: no metrics are kept or served. */
  readonly metricsPort?: number;
  readonly metricsHost!: string;
  /** Failed authentications per client address per minute before 429; 0 turns the limit off. */
  readonly authFailureLimitPerMinute!: number;
  /** Proxies whose X-Forwarded-For is believed: IP addresses and CIDR ranges. */
  readonly trustedProxies!: readonly string[];
  /** How many days events are kept for the feed and the stream (docs/events.md, "Retention"). */
  readonly eventRetentionDays!: number;
  /** Open event streams per API key on one instance; the next is refused with 429. */
  readonly eventStreamsPerKey!: number;
  /** Seconds between comment lines on an idle event stream. */
  readonly eventStreamHeartbeatSeconds!: number;
  /** How long a webhook delivery attempt may take before it counts as failed. */
  readonly webhookTimeoutMs!: number;
  /** The delay before each attempt of a webhook delivery, in ms (docs/events.md, "Webhooks"). */
  readonly webhookRetryScheduleMs!: readonly number[];
  /** Whether webhook targets may be loopback, private or otherwise non-public addresses. */
  readonly webhookAllowPrivateTargets!: boolean;
  /** How long an order holds its pet when createOrder names no holdSeconds. */
  readonly orderHoldSeconds!: number;
}

export class ConfigError extends Error {
  constructor(variable: string, expected: string, actual: string) {
    super(`Invalid configuration: ${variable} must be ${expected} (got ${JSON.stringify(actual)})`);
  }
}

/**
 * Defaults are what a production deployment wants when a variable is unset;
 * the committed `.env` overrides some of them for local development.
 */
const DEFAULTS = {
  NODE_ENV: 'production',
  HOST: '127.0.0.1',
  PORT: '3000',
  DATABASE_URL: 'sqlite:data/animal-store.sqlite',
  DATABASE_READ_URL: '',
  LOG_LEVEL: 'info',
  PUBLIC_BASE_URL: 'https://api.animal-store.example/v1',
  STAGING_BASE_URL: 'https://staging.api.animal-store.example/v1',
  BODY_LIMIT_BYTES: '16384',
  RATE_LIMIT_PER_MINUTE: '600',
  REDIS_URL: '',
  METRICS_PORT: '',
  METRICS_HOST: '127.0.0.1',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '60',
  TRUSTED_PROXIES: '',
  EVENT_RETENTION_DAYS: '30',
  EVENT_STREAMS_PER_KEY: '5',
  EVENT_STREAM_HEARTBEAT_SECONDS: '15',
  WEBHOOK_TIMEOUT_MS: '15000',
  WEBHOOK_RETRY_SCHEDULE: '0s,5s,5m,30m,2h,5h,10h,14h,20h,24h',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
  ORDER_HOLD_SECONDS: '900',
} as const;

/** Every variable the service reads. */
export const CONFIG_VARIABLES = Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[];

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  const read = (name: keyof typeof DEFAULTS): string => {
    const value = env[name];
    return value === undefined || value === '' ? DEFAULTS[name] : value;
  };
  const config: AppConfig = {
    nodeEnv: oneOf('NODE_ENV', read('NODE_ENV'), NODE_ENVS),
    host: nonEmpty('HOST', read('HOST')),
    port: integer('PORT', read('PORT'), 0, 65535),
    database: withReadUrl(
      databaseUrl('DATABASE_URL', read('DATABASE_URL')),
      read('DATABASE_READ_URL'),
    ),
    logLevel: oneOf('LOG_LEVEL', read('LOG_LEVEL'), LOG_LEVELS),
    publicBaseUrl: versionedBaseUrl('PUBLIC_BASE_URL', read('PUBLIC_BASE_URL')),
    stagingBaseUrl: versionedBaseUrl('STAGING_BASE_URL', read('STAGING_BASE_URL')),
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', read('BODY_LIMIT_BYTES'), 1024, 10 * 1024 * 1024),
    rateLimitPerMinute: integer(
      'RATE_LIMIT_PER_MINUTE',
      read('RATE_LIMIT_PER_MINUTE'),
      0,
      1_000_000,
    ),
    redisUrl: optionalRedisUrl('REDIS_URL', read('REDIS_URL')),
    metricsPort: optionalPort('METRICS_PORT', read('METRICS_PORT')),
    metricsHost: nonEmpty('METRICS_HOST', read('METRICS_HOST')),
    authFailureLimitPerMinute: integer(
      'AUTH_FAILURE_LIMIT_PER_MINUTE',
      read('AUTH_FAILURE_LIMIT_PER_MINUTE'),
      0,
      1_000_000,
    ),
    trustedProxies: addressRanges('TRUSTED_PROXIES', read('TRUSTED_PROXIES')),
    eventRetentionDays: integer('EVENT_RETENTION_DAYS', read('EVENT_RETENTION_DAYS'), 1, 3650),
    eventStreamsPerKey: integer('EVENT_STREAMS_PER_KEY', read('EVENT_STREAMS_PER_KEY'), 1, 1000),
    eventStreamHeartbeatSeconds: integer(
      'EVENT_STREAM_HEARTBEAT_SECONDS',
      read('EVENT_STREAM_HEARTBEAT_SECONDS'),
      1,
      15,
    ),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', read('WEBHOOK_TIMEOUT_MS'), 100, 120_000),
    webhookRetryScheduleMs: durations('WEBHOOK_RETRY_SCHEDULE', read('WEBHOOK_RETRY_SCHEDULE')),
    webhookAllowPrivateTargets: boolean(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      read('WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    ),
    // The bounds of createOrder's holdSeconds (docs/api-design.md, "Orders").
    orderHoldSeconds: integer('ORDER_HOLD_SECONDS', read('ORDER_HOLD_SECONDS'), 60, 86_400),
  };
  return Object.freeze(Object.assign(new AppConfig(), config));
}

/** Loads `.env` from the working directory; variables already set in the environment win. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(name, `one of ${allowed.join(', ')}`, value);
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() !== '') return value;
  throw new ConfigError(name, 'a non-empty string', value);
}

function integer(name: string, value: string, min: number, max: number): number {
  const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
  if (parsed >= min && parsed <= max) return parsed;
  throw new ConfigError(name, `an integer from ${min} to ${max}`, value);
}

function boolean(name: string, value: string): boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  throw new ConfigError(name, 'true or false', value);
}

const DURATION_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;
const MAX_RETRY_DELAY_MS = 7 * 24 * 3_600_000;
const MAX_ATTEMPTS = 20;

/** Comma-separated durations of whole seconds, minutes or hours (`0s,5s,5m,2h`), as ms. */
function durations(name: string, value: string): readonly number[] {
  const parsed = value.split(',').map((text) => {
    const match = /^(0|[1-9]\d{0,5})([smh])$/.exec(text);
    return match ? Number(match[1]) * DURATION_UNIT_MS[match[2] as 's' | 'm' | 'h'] : NaN;
  });
  if (parsed.length <= MAX_ATTEMPTS && parsed.every((ms) => ms <= MAX_RETRY_DELAY_MS))
    return Object.freeze(parsed);
  throw new ConfigError(
    name,
    `1 to ${MAX_ATTEMPTS} comma-separated delays of at most 7 days, each whole seconds, minutes or hours (0s,5s,5m,2h)`,
    value,
  );
}

function optionalPort(name: string, value: string): number | undefined {
  return value === '' ? undefined : integer(name, value, 0, 65535);
}

function databaseUrl(name: string, value: string): DatabaseConfig {
  if (value.startsWith('sqlite:') && value.slice('sqlite:'.length).trim() !== '') {
    return { type: 'sqlite', path: value.slice('sqlite:'.length) };
  }
  if (/^postgres(ql)?:\/\/./.test(value) && URL.canParse(value)) {
    return { type: 'postgres', url: value };
  }
  throw new ConfigError(
    name,
    'sqlite:<path> or postgres://user@host:port/database',
    redactUrl(value),
  );
}

/** DATABASE_READ_URL: a second PostgreSQL URL for reads, only next to a PostgreSQL DATABASE_URL. */
function withReadUrl(database: DatabaseConfig, value: string): DatabaseConfig {
  if (value === '') return database;
  if (database.type !== 'postgres') {
    throw new ConfigError(
      'DATABASE_READ_URL',
      'unset when DATABASE_URL is sqlite: (read replicas need PostgreSQL)',
      redactUrl(value),
    );
  }
  if (/^postgres(ql)?:\/\/./.test(value) && URL.canParse(value)) {
    return { ...database, readUrl: value };
  }
  throw new ConfigError(
    'DATABASE_READ_URL',
    'empty or postgres://user@host:port/database',
    redactUrl(value),
  );
}

function versionedBaseUrl(name: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  const plain =
    url &&
    /^https?:$/.test(url.protocol) &&
    !url.username &&
    !url.password &&
    !url.search &&
    !url.hash;
  if (plain && /\/v1\/?$/.test(url.pathname)) return value.replace(/\/$/, '');
  throw new ConfigError(
    name,
    'an http(s) URL ending in /v1, without credentials, query or fragment',
    value,
  );
}

function optionalRedisUrl(name: string, value: string): string | undefined {
  if (value === '') return undefined;
  if (/^rediss?:\/\/./.test(value) && URL.canParse(value)) return value;
  throw new ConfigError(name, 'redis://host:port or rediss://host:port', redactUrl(value));
}

/** Comma-separated IP addresses and CIDR ranges (`10.0.0.0/8,2001:db8::1`); empty: none. */
function addressRanges(name: string, value: string): readonly string[] {
  if (value === '') return [];
  const ranges = value.split(',').map((range) => range.trim());
  for (const range of ranges) {
    const [address, prefix, ...rest] = range.split('/');
    const version = isIP(address);
    const maxPrefix = version === 6 ? 128 : 32;
    const prefixOk =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (version === 0 || !prefixOk || rest.length) {
      throw new ConfigError(
        name,
        'comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.0/8,192.168.1.10',
        value,
      );
    }
  }
  return Object.freeze(ranges);
}

/** Keeps credentials in DATABASE_URL out of error messages: everything up to the last `@` goes. */
function redactUrl(value: string): string {
  return value.replace(/\/\/.*@/, '//***@');
}
