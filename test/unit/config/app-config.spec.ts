import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  AppConfig,
  CONFIG_VARIABLES,
  ConfigError,
  loadConfig,
} from '../../../src/config/app-config.js';
import { relaxedGuards } from '../../../src/config/relaxed-guards.js';

/** The error loadConfig throws for this environment (fails the test if it does not throw). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

describe('loadConfig', () => {
  it('uses the production defaults when nothing is set', () => {
    expect({ ...loadConfig({}) }).toEqual({
      nodeEnv: 'production',
      host: '127.0.0.1',
      port: 3000,
      database: { type: 'sqlite', path: 'data/animal-store.sqlite' },
      logLevel: 'info',
      publicBaseUrl: 'https://api.animal-store.example/v1',
      stagingBaseUrl: 'https://staging.api.animal-store.example/v1',
      bodyLimitBytes: 16384,
      rateLimitPerMinute: 600,
      redisUrl: undefined,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      authFailureLimitPerMinute: 60,
      trustedProxies: [],
      eventRetentionDays: 30,
      eventStreamsPerKey: 5,
      eventStreamHeartbeatSeconds: 15,
      webhookTimeoutMs: 15000,
      webhookRetryScheduleMs: [
        0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000,
        86_400_000,
      ],
      webhookAllowPrivateTargets: false,
      orderHoldSeconds: 900,
    });
  });

  it('returns a frozen AppConfig', () => {
    const config = loadConfig({});
    expect(config).toBeInstanceOf(AppConfig);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty strings as unset', () => {
    const empty = Object.fromEntries(
      [
        'NODE_ENV',
        'HOST',
        'PORT',
        'DATABASE_URL',
        'DATABASE_READ_URL',
        'LOG_LEVEL',
        'PUBLIC_BASE_URL',
        'STAGING_BASE_URL',
        'BODY_LIMIT_BYTES',
        'RATE_LIMIT_PER_MINUTE',
        'REDIS_URL',
        'METRICS_PORT',
        'METRICS_HOST',
        'AUTH_FAILURE_LIMIT_PER_MINUTE',
        'TRUSTED_PROXIES',
        'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      ].map((name) => [name, '']),
    );
    expect({ ...loadConfig(empty) }).toEqual({ ...loadConfig({}) });
  });

  it('ignores variables it does not know', () => {
    expect({ ...loadConfig({ UNRELATED: 'x' }) }).toEqual({ ...loadConfig({}) });
  });

  describe('PORT', () => {
    it.each([
      ['0', 0],
      ['8080', 8080],
      ['65535', 65535],
    ])('accepts %j', (value, expected) => {
      expect(loadConfig({ PORT: value }).port).toBe(expected);
    });

    it.each(['abc', '-1', '65536', '3.5', ' 80', '1e3', '0x50'])(
      'rejects %j, naming the variable',
      (value) => {
        expect(configError({ PORT: value }).message).toBe(
          `Invalid configuration: PORT must be an integer from 0 to 65535 (got ${JSON.stringify(value)})`,
        );
      },
    );

    it('reports the exact message for "abc"', () => {
      expect(configError({ PORT: 'abc' }).message).toBe(
        'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")',
      );
    });
  });

  describe('HOST', () => {
    it('accepts any non-blank host', () => {
      expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    });

    it('rejects a blank host', () => {
      expect(configError({ HOST: '  ' }).message).toBe(
        'Invalid configuration: HOST must be a non-empty string (got "  ")',
      );
    });
  });

  describe('DATABASE_URL', () => {
    it('reads sqlite:<path> as an SQLite file', () => {
      expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/pets.db' }).database).toEqual({
        type: 'sqlite',
        path: '/var/lib/pets.db',
      });
    });

    it('keeps an in-memory SQLite path as given', () => {
      expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({
        type: 'sqlite',
        path: ':memory:',
      });
    });

    it.each(['postgres://user:pw@db.example:5432/pets', 'postgresql://user@localhost/pets'])(
      'reads %j as PostgreSQL',
      (url) => {
        expect(loadConfig({ DATABASE_URL: url }).database).toEqual({ type: 'postgres', url });
      },
    );

    it.each([
      'mysql://x',
      'sqlite:',
      'sqlite:  ',
      'postgres://',
      'postgres:/host/db',
      'pets.sqlite',
    ])('rejects %j, naming the variable', (url) => {
      expect(configError({ DATABASE_URL: url }).message).toBe(
        `Invalid configuration: DATABASE_URL must be sqlite:<path> or postgres://user@host:port/database (got ${JSON.stringify(url)})`,
      );
    });

    it.each([
      'postgres//user:secret@host/db',
      'postgres://user:secret@host:99999/db',
      'mysql://user:secret@host/db',
      'postgres://:secret@host:99999/db',
      'postgres://user:se/cret@host:99999/db',
      'postgres://user:se@cret@host:99999/db',
    ])('does not echo the credentials of the rejected %j', (url) => {
      const { message } = configError({ DATABASE_URL: url });
      expect(message).toContain('DATABASE_URL');
      expect(message).toContain('//***@host');
      expect(message).not.toMatch(/se.?cret|user:/);
    });
  });

  describe('DATABASE_READ_URL', () => {
    const primary = 'postgres://app@primary.internal:5432/pets';

    it('is left out when unset: reads go to DATABASE_URL', () => {
      expect(loadConfig({ DATABASE_URL: primary }).database).toEqual({
        type: 'postgres',
        url: primary,
      });
    });

    it.each(['postgres://app@replicas.internal:5001/pets', 'postgresql://app@localhost/pets'])(
      'reads %j as the read URL next to a PostgreSQL DATABASE_URL',
      (readUrl) => {
        expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: readUrl }).database).toEqual({
          type: 'postgres',
          url: primary,
          readUrl,
        });
      },
    );

    it('is refused next to SQLite, saying why', () => {
      expect(
        configError({
          DATABASE_URL: 'sqlite:pets.sqlite',
          DATABASE_READ_URL: 'postgres://app:secret@replicas.internal/pets',
        }).message,
      ).toBe(
        'Invalid configuration: DATABASE_READ_URL must be unset when DATABASE_URL is sqlite: (read replicas need PostgreSQL) (got "postgres://***@replicas.internal/pets")',
      );
    });

    it.each(['sqlite:replica.sqlite', 'mysql://x', 'postgres://'])('rejects %j', (value) => {
      expect(configError({ DATABASE_URL: primary, DATABASE_READ_URL: value }).message).toBe(
        `Invalid configuration: DATABASE_READ_URL must be empty or postgres://user@host:port/database (got ${JSON.stringify(value)})`,
      );
    });

    it('does not echo the credentials of a rejected value', () => {
      const { message } = configError({
        DATABASE_URL: primary,
        DATABASE_READ_URL: 'postgres//user:secret@replica/db',
      });
      expect(message).toContain('//***@replica');
      expect(message).not.toMatch(/secret|user:/);
    });
  });

  describe('NODE_ENV', () => {
    it.each(['development', 'test', 'production'])('accepts %j', (value) => {
      expect(loadConfig({ NODE_ENV: value }).nodeEnv).toBe(value);
    });

    it.each(['prod', 'Production', 'staging'])('rejects %j', (value) => {
      expect(configError({ NODE_ENV: value }).message).toBe(
        `Invalid configuration: NODE_ENV must be one of development, test, production (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe('LOG_LEVEL', () => {
    it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])(
      'accepts %j',
      (value) => {
        expect(loadConfig({ LOG_LEVEL: value }).logLevel).toBe(value);
      },
    );

    it.each(['verbose', 'INFO', 'warning'])('rejects %j', (value) => {
      expect(configError({ LOG_LEVEL: value }).message).toBe(
        `Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe.each(['PUBLIC_BASE_URL', 'STAGING_BASE_URL'] as const)('%s', (name) => {
    const key = name === 'PUBLIC_BASE_URL' ? 'publicBaseUrl' : 'stagingBaseUrl';

    it.each(['https://pets.example/v1', 'http://localhost:3000/v1', 'https://pets.example/api/v1'])(
      'accepts %j as is',
      (url) => {
        expect(loadConfig({ [name]: url })[key]).toBe(url);
      },
    );

    it('strips one trailing slash', () => {
      expect(loadConfig({ [name]: 'https://pets.example/v1/' })[key]).toBe(
        'https://pets.example/v1',
      );
    });

    it.each([
      'ftp://pets.example/v1',
      'https://pets.example',
      'https://pets.example/v2',
      'https://pets.example/v1/pets',
      'https://pets.example/v10',
      'pets.example/v1',
      '/v1',
      'https://pets.example/v1?q=1',
      'https://pets.example/v1#f',
      'https://u:p@pets.example/v1',
    ])('rejects %j', (url) => {
      expect(configError({ [name]: url }).message).toBe(
        `Invalid configuration: ${name} must be an http(s) URL ending in /v1, without credentials, query or fragment (got ${JSON.stringify(url)})`,
      );
    });
  });

  describe('BODY_LIMIT_BYTES', () => {
    it.each([
      ['1024', 1024],
      ['1048576', 1048576],
      ['10485760', 10485760],
    ])('accepts %j', (value, expected) => {
      expect(loadConfig({ BODY_LIMIT_BYTES: value }).bodyLimitBytes).toBe(expected);
    });

    it.each(['1023', '10485761', '0', '-1', '16k', '16384.5'])('rejects %j', (value) => {
      expect(configError({ BODY_LIMIT_BYTES: value }).message).toBe(
        `Invalid configuration: BODY_LIMIT_BYTES must be an integer from 1024 to 10485760 (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe('RATE_LIMIT_PER_MINUTE', () => {
    it.each([
      ['0', 0],
      ['1', 1],
      ['1000000', 1_000_000],
    ])('accepts %j', (value, expected) => {
      expect(loadConfig({ RATE_LIMIT_PER_MINUTE: value }).rateLimitPerMinute).toBe(expected);
    });

    it.each(['-1', '1000001', 'off', '60/s', '1.5'])('rejects %j', (value) => {
      expect(configError({ RATE_LIMIT_PER_MINUTE: value }).message).toBe(
        `Invalid configuration: RATE_LIMIT_PER_MINUTE must be an integer from 0 to 1000000 (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe('REDIS_URL', () => {
    it.each(['redis://127.0.0.1:6379', 'rediss://user:pw@cache.example:6380/2'])(
      'accepts %j',
      (url) => {
        expect(loadConfig({ REDIS_URL: url }).redisUrl).toBe(url);
      },
    );

    it.each(['127.0.0.1:6379', 'http://cache', 'redis://'])('rejects %j', (url) => {
      expect(configError({ REDIS_URL: url }).message).toBe(
        `Invalid configuration: REDIS_URL must be redis://host:port or rediss://host:port (got ${JSON.stringify(url)})`,
      );
    });

    it('does not echo the password of a rejected URL', () => {
      const { message } = configError({ REDIS_URL: 'redis//user:secret@cache:6379' });
      expect(message).toContain('//***@cache');
      expect(message).not.toContain('secret');
    });
  });

  describe('METRICS_PORT and METRICS_HOST', () => {
    it('keep no metrics when METRICS_PORT is unset, and listen on loopback by default', () => {
      expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: '127.0.0.1' });
    });

    it.each([
      ['9464', 9464],
      ['0', 0],
    ])('accept METRICS_PORT %j', (value, expected) => {
      expect(loadConfig({ METRICS_PORT: value }).metricsPort).toBe(expected);
    });

    it.each(['metrics', '65536', '-1'])('reject METRICS_PORT %j', (value) => {
      expect(configError({ METRICS_PORT: value }).message).toBe(
        `Invalid configuration: METRICS_PORT must be an integer from 0 to 65535 (got ${JSON.stringify(value)})`,
      );
    });

    it('rejects a blank METRICS_HOST', () => {
      expect(configError({ METRICS_HOST: ' ' }).message).toBe(
        'Invalid configuration: METRICS_HOST must be a non-empty string (got " ")',
      );
    });
  });

  describe('AUTH_FAILURE_LIMIT_PER_MINUTE', () => {
    it.each([
      ['0', 0],
      ['60', 60],
      ['1000000', 1_000_000],
    ])('accepts %j', (value, expected) => {
      expect(loadConfig({ AUTH_FAILURE_LIMIT_PER_MINUTE: value }).authFailureLimitPerMinute).toBe(
        expected,
      );
    });

    it.each(['-1', '1000001', 'off', '1.5'])('rejects %j', (value) => {
      expect(configError({ AUTH_FAILURE_LIMIT_PER_MINUTE: value }).message).toBe(
        `Invalid configuration: AUTH_FAILURE_LIMIT_PER_MINUTE must be an integer from 0 to 1000000 (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe('TRUSTED_PROXIES', () => {
    it.each([
      ['10.0.0.5', ['10.0.0.5']],
      ['10.0.0.0/8, 192.168.1.10', ['10.0.0.0/8', '192.168.1.10']],
      ['::1,2001:db8::/32,0.0.0.0/0', ['::1', '2001:db8::/32', '0.0.0.0/0']],
    ])('accepts %j', (value, expected) => {
      expect(loadConfig({ TRUSTED_PROXIES: value }).trustedProxies).toEqual(expected);
    });

    it.each([
      'lb.internal',
      '10.0.0.0/33',
      '2001:db8::/129',
      '10.0.0.1/8/1',
      '10.0.0.1,',
      '10.0.0/8',
      '1.2.3.4/x',
    ])('rejects %j', (value) => {
      expect(configError({ TRUSTED_PROXIES: value }).message).toBe(
        `Invalid configuration: TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.0/8,192.168.1.10 (got ${JSON.stringify(value)})`,
      );
    });
  });

  describe('WEBHOOK_RETRY_SCHEDULE', () => {
    it.each([
      ['1s', [1_000]],
      ['0s,1s,1s', [0, 1_000, 1_000]],
      ['2m,1h', [120_000, 3_600_000]],
    ])('reads %j', (value, delays) => {
      expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: value }).webhookRetryScheduleMs).toEqual(delays);
    });

    it.each([
      '1',
      '1s,',
      ' 1s',
      '01s',
      '1d',
      '1.5s',
      '-1s',
      '169h',
      Array(21).fill('1s').join(','),
    ])('rejects %j', (value) => {
      expect(configError({ WEBHOOK_RETRY_SCHEDULE: value }).message).toBe(
        `Invalid configuration: WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated delays of at most 7 days, each whole seconds, minutes or hours (0s,5s,5m,2h) (got ${JSON.stringify(value)})`,
      );
    });

    it.each(['59', '86401', ' 900', '9e2', 'abc'])('ORDER_HOLD_SECONDS rejects %j', (value) => {
      expect(configError({ ORDER_HOLD_SECONDS: value }).message).toBe(
        `Invalid configuration: ORDER_HOLD_SECONDS must be an integer from 60 to 86400 (got ${JSON.stringify(value)})`,
      );
    });

    it('ORDER_HOLD_SECONDS takes 60 to 86400', () => {
      expect(loadConfig({ ORDER_HOLD_SECONDS: '60' }).orderHoldSeconds).toBe(60);
      expect(loadConfig({ ORDER_HOLD_SECONDS: '86400' }).orderHoldSeconds).toBe(86400);
    });

    it('WEBHOOK_ALLOW_PRIVATE_TARGETS is true or false', () => {
      expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).webhookAllowPrivateTargets).toBe(
        true,
      );
      expect(configError({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }).message).toBe(
        'Invalid configuration: WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false (got "yes")',
      );
    });
  });

  describe.each([
    ['.env', ['WEBHOOK_ALLOW_PRIVATE_TARGETS']],
    ['config/production.env.example', []],
  ])('%s', (file, commentedOut) => {
    const text = readFileSync(file, 'utf8');
    const env = parseEnv(text);

    it('sets every variable the service reads, and nothing else; one left unset is shown commented out', () => {
      expect(Object.keys(env).sort()).toEqual(
        CONFIG_VARIABLES.filter((name) => !commentedOut.includes(name)).sort(),
      );
      for (const name of commentedOut) expect(text).toMatch(new RegExp(`^# ${name}=`, 'm'));
    });

    it('is a valid configuration', () => {
      expect(() => loadConfig(env)).not.toThrow();
    });
  });

  describe('the committed .env', () => {
    const config = loadConfig(parseEnv(readFileSync('.env', 'utf8')));
    const defaults = loadConfig({});

    it('relaxes no guard: each is at its production default', () => {
      const guards = (c: AppConfig) => ({
        host: c.host,
        metricsHost: c.metricsHost,
        bodyLimitBytes: c.bodyLimitBytes,
        rateLimitPerMinute: c.rateLimitPerMinute,
        authFailureLimitPerMinute: c.authFailureLimitPerMinute,
        trustedProxies: c.trustedProxies,
        eventStreamsPerKey: c.eventStreamsPerKey,
        webhookAllowPrivateTargets: c.webhookAllowPrivateTargets,
      });
      expect(relaxedGuards(config)).toEqual([]);
      expect(guards(config)).toEqual(guards(defaults));
      expect(guards(config)).toEqual({
        host: '127.0.0.1',
        metricsHost: '127.0.0.1',
        bodyLimitBytes: 16384,
        rateLimitPerMinute: 600,
        authFailureLimitPerMinute: 60,
        trustedProxies: [],
        eventStreamsPerKey: 5,
        webhookAllowPrivateTargets: false,
      });
    });
  });

  it('documents every variable in the README configuration table', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const name of CONFIG_VARIABLES) expect(readme).toContain(`| \`${name}\` |`);
  });
});
