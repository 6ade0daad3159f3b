import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api-schema.js';
import { findLink } from './link-header.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/** The body of every error response of the API. */
export type ErrorBody = components['schemas']['Error'];

export type AnimalStoreClient = Client<paths>;

/** An error response of the API, carrying its Error body. */
export class AnimalStoreError extends Error {
  readonly body: ErrorBody;

  constructor(operation: string, body: ErrorBody) {
    super(`${operation}: ${body.status} ${body.code}: ${body.message}`);
    this.name = 'AnimalStoreError';
    this.body = body;
  }
}

/** A client for the API at `baseUrl` (the server URL, ending in /v1), sending `apiKey` on every call. */
export function createAnimalStoreClient(baseUrl: string, apiKey: string): AnimalStoreClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
}

export async function createPet(client: AnimalStoreClient, pet: NewPet): Promise<Pet> {
  const { data, error, response } = await client.POST('/pets', { body: pet });
  if (data === undefined) throw failure('createPet', error, response);
  return data;
}

/**
 * The pages of listPets, fetched one at a time as they are consumed: each page's
 * `Link: <…>; rel="next"` leads to the next, and the last page has none.
 */
export async function* listPetPages(
  client: AnimalStoreClient,
  pageSize: number,
): AsyncGenerator<Pet[]> {
  let page = await client.GET('/pets', { params: { query: { limit: pageSize } } });
  for (;;) {
    const { data, error, response } = page;
    if (data === undefined) throw failure('listPets', error, response);
    yield data;
    const nextQuery = nextPageQuery(response, 'listPets');
    if (nextQuery === undefined) return;
    // Sent exactly as the server wrote it: the cursor is opaque, and the link carries the limit
    // and any filter of the walk.
    page = await client.GET('/pets', { querySerializer: () => nextQuery });
  }
}

/** The query string of the response's next page; undefined when it has none. */
export function nextPageQuery(response: Response, operation: string): string | undefined {
  const target = findLink(response.headers.get('Link'), 'next');
  if (target === undefined) return undefined;
  // The target is relative (`</v1/pets?limit=20&cursor=…>`): it resolves against the URL requested.
  const next = new URL(target, response.url);
  const listed = new URL(response.url);
  if (next.origin !== listed.origin || next.pathname !== listed.pathname)
    throw new Error(`${operation}: the next link points away from the listing: ${next.href}`);
  return next.search;
}

/** A page of listPets as last read, with the ETag that asks whether it has changed since. */
export interface HeldPage {
  pets: Pet[];
  etag: string;
}

export interface PageRead {
  page: HeldPage;
  /** False when the server answered 304 Not Modified: `page` is the one held, kept as it was. */
  changed: boolean;
}

/**
 * Reads a page of listPets, or only asks whether it changed: with a page held, its ETag goes in
 * `If-None-Match`, and a 304 Not Modified (no body) means the held page is still current. Polling
 * a page this way costs the client one small answer until the page changes.
 */
export async function readPage(
  client: AnimalStoreClient,
  query: { limit?: number; status?: PetStatus },
  held?: HeldPage,
): Promise<PageRead> {
  const { data, error, response } = await client.GET('/pets', {
    params: { query, header: held && { 'If-None-Match': held.etag } },
  });
  // openapi-fetch hands a 304 over as an error without a body: it is the answer we asked for.
  if (response.status === 304 && held !== undefined) return { page: held, changed: false };
  if (data === undefined) throw failure('listPets', error, response);
  const etag = response.headers.get('ETag');
  if (etag === null) throw new Error('listPets: the answer has no ETag');
  return { page: { pets: data, etag }, changed: true };
}

/** getPet is deprecated (see its Sunset header) but still the way to read one pet by id. */
export async function getPet(client: AnimalStoreClient, petId: number): Promise<Pet> {
  const { data, error, response } = await client.GET('/pets/{petId}', {
    params: { path: { petId } },
  });
  if (data === undefined) throw failure('getPet', error, response);
  return data;
}

/** A pet as read, with the ETag that names this version of it. */
export interface HeldPet {
  pet: Pet;
  etag: string;
}

/** Reads one pet with its ETag, for a change that must not overwrite someone else's. */
export async function readPet(client: AnimalStoreClient, petId: number): Promise<HeldPet> {
  const { data, error, response } = await client.GET('/pets/{petId}', {
    params: { path: { petId } },
  });
  if (data === undefined) throw failure('getPet', error, response);
  return { pet: data, etag: entityTagOf(response, 'getPet') };
}

/**
 * Sells the pet as it was read: a merge patch of its status, sent with the held ETag in If-Match.
 * If anyone changed the pet since (another till sold it, say), the answer is 412
 * PRECONDITION_FAILED and nothing changes; a pet already sold is 409 INVALID_TRANSITION.
 */
export async function sellPet(client: AnimalStoreClient, held: HeldPet): Promise<HeldPet> {
  const { data, error, response } = await client.PATCH('/pets/{petId}', {
    params: { path: { petId: held.pet.id }, header: { 'If-Match': held.etag } },
    body: { status: 'sold' },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  if (data === undefined) throw failure('updatePet', error, response);
  return { pet: data, etag: entityTagOf(response, 'updatePet') };
}

function entityTagOf(response: Response, operation: string): string {
  const etag = response.headers.get('ETag');
  if (etag === null) throw new Error(`${operation}: the answer has no ETag`);
  return etag;
}

/** A typed AnimalStoreError for the API's Error body; a plain Error when something else answered. */
export function failure(operation: string, error: unknown, response: Response): Error {
  if (isErrorBody(error)) return new AnimalStoreError(operation, error);
  // A proxy in front of the API, for example, answers with its own page.
  return new Error(`${operation}: unexpected HTTP ${response.status} response`);
}

function isErrorBody(value: unknown): value is ErrorBody {
  const body = value as Partial<ErrorBody> | null | undefined;
  return (
    typeof body?.code === 'string' &&
    typeof body.message === 'string' &&
    typeof body.status === 'number'
  );
}

/** What to tell a person about an error response. */
export function explainError(body: ErrorBody): string {
  switch (body.code) {
    case 'UNAUTHORIZED':
      return `The API key was refused (${body.message}). Create one at the repository root with: npm run --silent apikey -- create <name>`;
    case 'FORBIDDEN':
      // A valid key without the scope the operation needs, e.g. a read-only key adding a pet.
      return `The API key may not do this (${body.message}). Use a key with that scope: npm run --silent apikey -- create <name> --scopes pets:read,pets:write`;
    case 'GONE':
      return `This operation has been retired: ${body.message}`;
    case 'PRECONDITION_FAILED':
      return `Someone changed the pet since you read it (${body.message}). Read it again and decide anew.`;
    case 'INVALID_TRANSITION':
      return `The pet cannot change that way now: ${body.message}`;
    case 'RATE_LIMITED':
    case 'SERVICE_UNAVAILABLE':
      return `The service cannot answer now (${body.code}: ${body.message}). Retry later.`;
    default:
      return `The request failed with ${body.status} ${body.code}: ${body.message}`;
  }
}

export interface ExampleOptions {
  /** The server URL, ending in /v1, e.g. http://127.0.0.1:3000/v1. */
  baseUrl: string;
  apiKey: string;
  log: (line: string) => void;
  /** Pets per page of listPets, 1–100. */
  pageSize?: number;
}

export interface ExampleResult {
  created: Pet;
  /** Every page of listPets, in order. */
  pages: Pet[][];
  readBack: Pet;
  /** The first page read again with its ETag: unchanged, so a 304 and no body. */
  firstPageAgain: PageRead;
  /** The new pet sold, with If-Match: the ETag it was read with. */
  sold: HeldPet;
  /** A second sale with the ETag read before the first: refused, 412, nothing changed. */
  staleSale: AnimalStoreError;
}

export const EXAMPLE_PET: NewPet = { name: 'Biscuit', categoryId: 1, status: 'available' };

/**
 * Adds a pet, walks every page of the catalogue, reads the new pet back by its id, asks whether
 * the first page has changed since (it has not: 304), sells the pet as it was read, and shows that
 * a second sale from the same read is refused.
 */
export async function runExample({
  baseUrl,
  apiKey,
  log,
  pageSize = 20,
}: ExampleOptions): Promise<ExampleResult> {
  const client = createAnimalStoreClient(baseUrl, apiKey);

  const created = await createPet(client, EXAMPLE_PET);
  log(`created ${describePet(created)}`);

  const pages: Pet[][] = [];
  for await (const page of listPetPages(client, pageSize)) pages.push(page);
  log(`listed ${summarize(pages.flat())} on ${pages.length} page(s) of up to ${pageSize}`);

  const held = await readPet(client, created.id);
  const readBack = held.pet;
  log(`read back ${describePet(readBack)}`);

  const firstPage = await readPage(client, { limit: pageSize });
  const firstPageAgain = await readPage(client, { limit: pageSize }, firstPage.page);
  log(
    firstPageAgain.changed
      ? 'the first page changed since it was read'
      : `the first page is unchanged: 304 Not Modified for ${firstPage.page.etag}`,
  );

  const sold = await sellPet(client, held);
  log(`sold ${describePet(sold.pet)} with If-Match: ${held.etag}, now ${sold.etag}`);
  const staleSale = await sellPet(client, held).then(
    () => {
      throw new Error('updatePet: a sale with a stale ETag was accepted');
    },
    (error: unknown) => {
      if (error instanceof AnimalStoreError && error.body.code === 'PRECONDITION_FAILED')
        return error;
      throw error;
    },
  );
  log(
    `a second sale with ${held.etag} is refused: ${staleSale.body.status} ${staleSale.body.code}`,
  );

  return { created, pages, readBack, firstPageAgain, sold, staleSale };
}

export function describePet({ id, name, categoryId, status }: Pet): string {
  return `#${id} ${shorten(name)} (category ${categoryId}, ${status ?? 'no status'})`;
}

/** Names run to 255 characters; a log line shows the start. */
function shorten(name: string): string {
  return name.length > 40 ? `${name.slice(0, 39)}…` : name;
}

/** A summary of a walk, which holds at least the pet this example created, in ascending id order. */
function summarize(pets: Pet[]): string {
  const categories = new Set<number>(pets.map((pet) => pet.categoryId));
  const statuses = Object.entries(countByStatus(pets)).map(([status, n]) => `${n} ${status}`);
  return (
    `${pets.length} pets (ids ${pets[0].id} to ${pets[pets.length - 1].id}, ` +
    `${categories.size} categories; ${statuses.join(', ')})`
  );
}

function countByStatus(pets: Pet[]): Record<PetStatus | 'no status', number> {
  const counts = { available: 0, pending: 0, sold: 0, 'no status': 0 };
  for (const pet of pets) counts[pet.status ?? 'no status'] += 1;
  return counts;
}
