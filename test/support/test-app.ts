import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import type { InjectOptions, LightMyRequestResponse as Response } from 'fastify';
import { DataSource } from 'typeorm';
import { createApp, type NestAppFactory } from '../../src/app.js';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { Clock } from '../../src/time/clock.js';
import { loadConfig } from '../../src/config/app-config.js';
import { createTestDatabase, type Engine } from './test-database.js';

export interface RequestOptions {
  /** JSON-encoded unless a string; sets Content-Type: application/json unless headers say otherwise. */
  body?: unknown;
  headers?: Record<string, string>;
  /** The API key to send; `null` sends no Authorization header. Defaults to a valid key. */
  key?: string | null;
}

export interface TestApp {
  app: NestFastifyApplication;
  dataSource: DataSource;
  /** A valid API key, created through the real key store. */
  key: string;
  databaseUrl: string;
  request(
    method: InjectOptions['method'],
    url: string,
    options?: RequestOptions,
  ): Promise<Response>;
  close(): Promise<void>;
}

/** A clock a test sets: the real time until `setTo`, then that instant, standing still. */
export class TestClock extends Clock {
  private fixed: Date | undefined;

  setTo(instant: Date): void {
    this.fixed = instant;
  }

  override now(): Date {
    return this.fixed ?? new Date();
  }
}

/** What a test may replace in the app module before it is compiled. */
export interface TestAppOverrides {
  /** The app's Clock: a test can stand on either side of a date without touching the machine's. */
  clock?: TestClock;
  /** Providers replaced through Nest's testing module, e.g. one that lets a test hold a call. */
  override?: (module: TestingModuleBuilder) => TestingModuleBuilder;
}

/** The app module compiled by Nest's testing module with the providers a test replaces. */
function withOverrides({ clock, override = (module) => module }: TestAppOverrides): NestAppFactory {
  return async (module, adapter, options) => {
    let builder = Test.createTestingModule({ imports: [module] });
    if (clock) builder = builder.overrideProvider(Clock).useValue(clock);
    const compiled = await override(builder).compile();
    return compiled.createNestApplication<NestFastifyApplication>(adapter, options);
  };
}

/**
 * The real application (Fastify adapter, guard, pipe, filter) on a fresh database, with the
 * providers `overrides` replaces.
 */
export async function startTestApp(
  engine: Engine,
  env: Record<string, string> = {},
  overrides?: TestAppOverrides,
): Promise<TestApp> {
  const database = await createTestDatabase(engine);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    ...env,
  });
  const app = await createApp(config, undefined, overrides && withOverrides(overrides));
  const { key } = await app.get(ApiKeyStore).create('e2e');
  return {
    app,
    dataSource: app.get(DataSource),
    key,
    databaseUrl: database.url,
    request: (method, url, { body, headers = {}, key: sentKey = key } = {}) =>
      app.inject({
        method,
        url,
        headers: {
          ...(sentKey !== null && { authorization: `Bearer ${sentKey}` }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body !== undefined && {
          payload: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      }),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** Another instance of the app on `first`'s database, as a second replica behind a balancer. */
export function startSecondInstance(
  first: TestApp,
  env: Record<string, string> = {},
): Promise<NestFastifyApplication> {
  return createApp(
    loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: first.databaseUrl, ...env }),
  );
}
