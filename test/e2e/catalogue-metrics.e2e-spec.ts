import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { createPet } from '../support/pets-api.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * The catalogue's operations are measured under their operationIds and their events counted by
 * type, like the seed's (docs/observability.md, "Metrics"). The full scrape by a real Prometheus
 * is test/e2e/metrics.e2e-spec.ts.
 */
describe('metrics of the catalogue operations [sqlite]', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '0' });
    const pet = await createPet(t, { name: 'Rex', categoryId: 1 });
    expect(
      (await t.request('PUT', '/v1/categories/1', { body: { name: 'Dogs' } })).statusCode,
    ).toBe(201);
    for (const url of [
      '/v1/categories',
      '/v1/categories/1',
      '/v1/inventory',
      '/v1/pets?categoryId=1',
    ])
      expect((await t.request('GET', url)).statusCode).toBe(200);
    expect((await t.request('DELETE', `/v1/pets/${pet.id}`)).statusCode).toBe(204);
    expect((await t.request('DELETE', '/v1/categories/1')).statusCode).toBe(204);
  });
  afterAll(() => t?.close());

  it('labels each request with its operationId and counts each kind of event', async () => {
    const text = await t.app.get(Metrics).exposition();
    for (const [operation, method, statusClass] of [
      ['putCategory', 'PUT', '2xx'],
      ['listCategories', 'GET', '2xx'],
      ['getCategory', 'GET', '2xx'],
      ['deleteCategory', 'DELETE', '2xx'],
      ['deletePet', 'DELETE', '2xx'],
      ['getInventory', 'GET', '2xx'],
    ])
      expect(text).toContain(
        `animal_store_http_request_duration_seconds_count{operation="${operation}",method="${method}",status_class="${statusClass}"} 1`,
      );
    for (const type of ['pet.deleted', 'category.updated', 'category.deleted'])
      expect(text).toContain(`animal_store_events_committed_total{type="${type}"} 1`);
  });
});
