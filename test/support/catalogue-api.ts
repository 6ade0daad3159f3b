import { expect } from 'vitest';
import { nextPage } from './pets-api.js';
import type { TestApp } from './test-app.js';

export interface Category {
  id: number;
  name: string;
}

/** An event as the feed serves it, whatever it is about. */
export interface FeedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Names a category through the API; `expected` is the status the test requires. */
export async function putCategory(
  t: TestApp,
  id: number,
  name: string,
  expected: 200 | 201 = 201,
): Promise<Category> {
  const response = await t.request('PUT', `/v1/categories/${id}`, { body: { name } });
  expect(response.statusCode, response.body).toBe(expected);
  return response.json<Category>();
}

/** Every row of the categories table, in id order, named or not, with numbers as numbers. */
export async function storedCategories(
  t: TestApp,
): Promise<{ id: number; name: string | null; revision: number }[]> {
  const rows: Record<string, unknown>[] = await t.dataSource.query(
    'SELECT id, name, revision FROM categories ORDER BY id',
  );
  return rows.map((row) => ({
    id: Number(row.id),
    name: row.name as string | null,
    revision: Number(row.revision),
  }));
}

/**
 * Every event in the feed, following its next links until a page comes back empty while at least
 * `count` were read (on PostgreSQL an event shows once the transactions begun before it ended).
 */
export async function feedEvents(t: TestApp, count: number): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let url = '/v1/events?limit=100';
  const deadline = Date.now() + 5_000;
  for (;;) {
    const page = await t.request('GET', url);
    expect(page.statusCode, page.body).toBe(200);
    url = nextPage(String(page.headers.link));
    const served = page.json<FeedEvent[]>();
    events.push(...served);
    if (served.length === 0 && (events.length >= count || Date.now() > deadline)) return events;
  }
}

/** Clears the change log between tests, as the feed's own suites do. */
export async function clearEvents(t: TestApp): Promise<void> {
  await t.dataSource.query('DELETE FROM pet_events');
  await t.dataSource.query('UPDATE pet_events_purged SET tx = 0, seq = 0');
}

/** How many responses had each status, e.g. `{ 201: 1, 409: 29 }`. */
export function statusCounts(responses: { statusCode: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { statusCode } of responses) counts[statusCode] = (counts[statusCode] ?? 0) + 1;
  return counts;
}
