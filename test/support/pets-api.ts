import { expect } from 'vitest';
import type { TestApp } from './test-app.js';
import type { Engine } from './test-database.js';

/** The largest id and categoryId: the largest integer a JSON number carries exactly (2^53-1). */
export const MAX_ID = 9007199254740991;

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

/**
 * The lifecycle table of docs/api-design.md ("The pet lifecycle"), written out for the tests as
 * their own expectation: the statuses a pet may move to from each (`none`: a pet without one).
 */
export const ALLOWED_TRANSITIONS: Record<string, string[]> = {
  none: ['available', 'pending', 'sold'],
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: [],
};

/** Creates a pet through the API, as a client would, and fails the test unless it is a 201. */
export async function createPet(t: TestApp, pet: object): Promise<Pet> {
  const response = await t.request('POST', '/v1/pets', { body: pet });
  expect(response.statusCode).toBe(201);
  return response.json<Pet>();
}

/** A row of the pets table: column names, not API fields; bigints as the driver returns them. */
export interface StoredPet {
  id: number | string;
  name: string;
  category_id: number | string;
  status: string | null;
}

/** Every row of the pets table, in id order, as the database holds it. */
export function storedPets(t: TestApp): Promise<StoredPet[]> {
  return t.dataSource.query('SELECT id, name, category_id, status FROM pets ORDER BY id');
}

/** A row as `storedPets` reads it back: PostgreSQL hands bigints back as strings in raw queries. */
export function asStored(engine: Engine) {
  return (row: { id: number; category_id: number }) =>
    engine === 'postgres'
      ? { ...row, id: String(row.id), category_id: String(row.category_id) }
      : row;
}

/** The URL in a `Link: <...>; rel="next"` header, to request the next page with. */
export function nextPage(link: string): string {
  return /^<([^>]+)>; rel="next"$/.exec(link)![1];
}
