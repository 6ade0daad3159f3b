import fc from 'fast-check';
import { expect } from 'vitest';
import { AppConfig } from '../../src/config/app-config.js';
import { AnswerChecks, type Answer, type SentRequest } from './answer-checks.js';
import { PET_NAME_RULE } from './hostile-bodies.js';
import { countRequest, HOSTILE_ENV, SEED } from './hostile-run.js';
import { validValue, type OpenApiDocument } from './openapi-arbitraries.js';
import { startTestApp, type TestApp } from './test-app.js';
import type { Engine } from './test-database.js';

export interface HostileRequest {
  /** Headers given as undefined are not sent. */
  headers?: Record<string, string | undefined>;
  payload?: Buffer | string;
}

/** The real app on a fresh database, with what the hostile suites send and check through it. */
export interface HostileApp {
  t: TestApp;
  bodyLimit: number;
  /** `Bearer <a valid key>`. */
  bearer(): string;
  /**
   * Sends a request through Fastify inject and holds the answer to the checks every answer must
   * pass (answer-checks.ts) before returning it.
   */
  send(
    method: string,
    url: string,
    request?: HostileRequest,
    sent?: Omit<SentRequest, 'method'>,
  ): Promise<Answer>;
  petCount(): Promise<number>;
  /** A stored pet as the API would answer it, without its id; undefined when there is none. */
  storedPet(id: number): Promise<Record<string, unknown> | undefined>;
  /** The id of a stored pet, chosen by index (wrapping round), or 1 when there are none. */
  existingId(index: number): Promise<number>;
  /** Stores `count` valid pets through createPet, generated from the document with the seed. */
  seedPets(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHostileApp(engine: Engine, doc: OpenApiDocument): Promise<HostileApp> {
  const t = await startTestApp(engine, HOSTILE_ENV);
  const checks = new AnswerChecks(doc, t.key);
  const petCount = async () =>
    Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM pets'))[0].n);

  const send: HostileApp['send'] = async (method, url, request = {}, sent = {}) => {
    countRequest();
    const headers = Object.fromEntries(
      Object.entries(request.headers ?? {}).filter(([, value]) => value !== undefined),
    ) as Record<string, string>;
    const response = await t.app.inject({
      method: method as 'GET',
      url,
      headers,
      payload: request.payload,
    });
    const answer: Answer = {
      status: response.statusCode,
      headers: Object.fromEntries(
        Object.entries(response.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value : value === undefined ? undefined : String(value),
        ]),
      ),
      body: response.body,
    };
    checks.check({ method, ...sent }, answer);
    return answer;
  };

  return {
    t,
    bodyLimit: t.app.get(AppConfig).bodyLimitBytes,
    bearer: () => `Bearer ${t.key}`,
    send,
    petCount,
    storedPet: async (id) => {
      const [row] = await t.dataSource.query(
        `SELECT name, category_id AS "categoryId", status FROM pets WHERE id = ${Number(id)}`,
      );
      if (!row) return undefined;
      const { name, categoryId, status } = row as Record<string, unknown>;
      return { name, categoryId: Number(categoryId), ...(status !== null && { status }) };
    },
    existingId: async (index) => {
      const rows = await t.dataSource.query(
        `SELECT id FROM pets ORDER BY id LIMIT 1 OFFSET ${index % Math.max(1, await petCount())}`,
      );
      return rows.length ? Number(rows[0].id) : 1;
    },
    seedPets: async (count) => {
      const newPet = doc.operation('createPet').requestBody!;
      const pets = fc.sample(validValue(doc, newPet, PET_NAME_RULE), {
        seed: SEED,
        numRuns: count,
      });
      for (const pet of pets) {
        const response = await t.request('POST', '/v1/pets', { body: pet });
        expect(response.statusCode, response.body).toBe(201);
      }
    },
    close: () => t.close(),
  };
}
