import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse as Response } from 'fastify';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { ApiKeysService } from '../../src/auth/api-keys.service.js';
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

/** The real application (Fastify adapter, guard, pipe, filter) on a fresh database. */
export async function startTestApp(
  engine: Engine,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const database = await createTestDatabase(engine);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    ...env,
  });
  const app = await createApp(config);
  const { key } = await app.get(ApiKeysService).create('e2e');
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
