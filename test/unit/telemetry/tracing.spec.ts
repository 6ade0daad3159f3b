import { describe, expect, it } from 'vitest';
import { statementName } from '../../../src/database/observed-sql-runner.js';
import { tracingRequested } from '../../../src/telemetry/tracing.js';

describe('tracingRequested', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
  ])('%j: %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });
});

describe('statementName', () => {
  it.each([
    ['SELECT p.id FROM pets p WHERE p.id = $1', 'SELECT pets'],
    ['INSERT INTO idempotency_keys (a) VALUES (?)', 'INSERT idempotency_keys'],
    ['DELETE FROM idempotency_keys WHERE expires_at <= ?', 'DELETE idempotency_keys'],
    ['UPDATE "api_keys" SET name = $1', 'UPDATE api_keys'],
    ['  select 1', 'SELECT'],
    ['BEGIN IMMEDIATE', 'BEGIN'],
    [
      'WITH pet AS (INSERT INTO pets (a) VALUES ($1) RETURNING id), event AS (INSERT INTO pet_events (b) SELECT id FROM pet) SELECT id FROM pet',
      'INSERT pets + INSERT pet_events',
    ],
    ['WITH pet AS (UPDATE pets SET a = $1 RETURNING id) SELECT id FROM pet', 'UPDATE pets'],
    ['WITH recent AS (SELECT id FROM pets) SELECT id FROM recent', 'WITH pets'],
    [
      'SELECT s.id, EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = s.id) FROM webhook_subscriptions s',
      'SELECT webhook_subscriptions',
    ],
    [
      'UPDATE webhook_subscriptions SET a = 1 WHERE id IN (SELECT s.id FROM webhook_subscriptions s)',
      'UPDATE webhook_subscriptions',
    ],
    ['INSERT INTO pets (name, category_id) VALUES ($1, (SELECT 1))', 'INSERT pets'],
  ])('%s → %s', (sql, name) => {
    expect(statementName(sql)).toBe(name);
  });
});
