import { expect } from 'vitest';
import { OrderExpirySweep } from '../../src/orders/order-expiry-sweep.js';
import type { TestApp, TestAppOverrides } from './test-app.js';

export interface Order {
  id: number;
  petId: number;
  status: 'open' | 'completed' | 'cancelled' | 'expired';
  createdAt: string;
  expiresAt: string;
  closedAt?: string;
}

/**
 * The app without its expiry sweep, so that what a test sees at a deadline is what the write
 * there did (the sweep's own tests run it).
 */
export const WITHOUT_SWEEP: Pick<TestAppOverrides, 'override'> = {
  override: (module) => module.overrideProvider(OrderExpirySweep).useValue({}),
};

/** Places an order through the API, as a till would, and fails the test unless it is a 201. */
export async function placeOrder(t: TestApp, body: object): Promise<Order> {
  const response = await t.request('POST', '/v1/orders', { body });
  expect(response.statusCode).toBe(201);
  return response.json<Order>();
}

/** A row of the orders table as the database holds it, timestamps as ISO text. */
export async function storedOrder(t: TestApp, id: number) {
  const [row] = await t.dataSource.query<Record<string, unknown>[]>(
    `SELECT id, pet_id, status, created_at, expires_at, closed_at, revision FROM orders WHERE id = ${Number(id)}`,
  );
  if (!row) return undefined;
  const iso = (value: unknown) => (value === null ? null : new Date(value as string).toISOString());
  return {
    id: Number(row.id),
    petId: Number(row.pet_id),
    status: row.status,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    closedAt: iso(row.closed_at),
    revision: Number(row.revision),
  };
}

/** The pet's stored status and revision. */
export async function storedPetState(t: TestApp, id: number) {
  const [row] = await t.dataSource.query<{ status: string | null; revision: number | string }[]>(
    `SELECT status, revision FROM pets WHERE id = ${Number(id)}`,
  );
  return row && { status: row.status, revision: Number(row.revision) };
}

/** Every event in the feed after `after` (all when absent): type and data, oldest first. */
export async function eventsAfter(t: TestApp, after?: string) {
  const response = await t.request('GET', `/v1/events?limit=100${after ? `&after=${after}` : ''}`);
  expect(response.statusCode).toBe(200);
  return response.json<{ id: string; type: string; data: Record<string, unknown> }[]>();
}
