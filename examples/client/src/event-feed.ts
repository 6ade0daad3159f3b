import { setTimeout as sleep } from 'node:timers/promises';
import type { components } from './api-schema.js';
import { readCursor, saveCursor } from './cursor-file.js';
import {
  AnimalStoreError,
  failure,
  nextPageQuery,
  type AnimalStoreClient,
  type ErrorBody,
} from './example.js';

/** An event of the feed: about a pet, a category's name or an order, as its `type` says. */
export type StoreEvent =
  | components['schemas']['PetEvent']
  | components['schemas']['CategoryEvent']
  | components['schemas']['OrderEvent'];

export interface FollowOptions {
  /**
   * The file that keeps the id of the last event handled; without it the follow starts at the
   * oldest event the feed keeps. One follower per file.
   */
  cursorFile: string;
  /**
   * Called with each event, in the feed's order, one at a time. If it throws, the follow ends with
   * that error and the event is delivered again on the next start.
   */
  handle: (event: StoreEvent) => void | Promise<void>;
  /** Ends the follow once the event being handled is done, with its position saved. */
  signal: AbortSignal;
  /** Events per page, 1–100. */
  pageSize?: number;
  /** How long to wait before asking again when the follower is up to date. */
  pollIntervalMs?: number;
}

/** The feed no longer holds the events after the saved cursor: following on would skip them. */
export class CursorExpiredError extends AnimalStoreError {
  constructor(
    readonly cursorFile: string,
    body: ErrorBody,
  ) {
    super('listEvents', body);
    this.name = 'CursorExpiredError';
    this.message =
      `The events after the cursor saved in ${cursorFile} were deleted (they were older than the ` +
      'feed keeps events), so following on would skip them. Resync: reconcile your copy with ' +
      `listPets (GET /v1/pets), then delete ${cursorFile} to follow from the oldest event kept.`;
  }
}

/** Answers asked again after their Retry-After: the key's rate limit, the database unreachable. */
const RETRIED_STATUSES = new Set([429, 503]);

/**
 * Follows the change feed from the saved cursor, forever: hands every event to `handle`, saves the
 * position after each page, and resolves once `signal` aborts. A crash re-delivers at most the page
 * being handled; nothing is ever skipped (docs/events.md, "The feed").
 */
export async function followEvents(
  client: AnimalStoreClient,
  { cursorFile, handle, signal, pageSize = 100, pollIntervalMs = 1_000 }: FollowOptions,
): Promise<void> {
  try {
    const after = await readCursor(cursorFile);
    for await (const events of eventPages(client, { after, pageSize, pollIntervalMs, signal })) {
      await handlePage(events, handle, cursorFile, signal);
      if (signal.aborted) return;
    }
  } catch (error) {
    if (error instanceof AnimalStoreError && error.body.code === 'CURSOR_EXPIRED')
      throw new CursorExpiredError(cursorFile, error.body);
    // Every event handled is saved by now, whatever ended the follow, so an abort (which ends a
    // request or a wait with an AbortError) is a clean stop.
    if (signal.aborted) return;
    throw error;
  }
}

/**
 * Hands the page's events to `handle` in order until the signal aborts, then saves the position of
 * the last one handled: also when a handler throws, so that only its event is delivered again.
 */
async function handlePage(
  events: StoreEvent[],
  handle: FollowOptions['handle'],
  cursorFile: string,
  signal: AbortSignal,
): Promise<void> {
  let handled: string | undefined;
  try {
    for (const event of events) {
      if (signal.aborted) break;
      await handle(event);
      handled = event.id;
    }
  } finally {
    if (handled !== undefined) await saveCursor(cursorFile, handled);
  }
}

interface PageWalk {
  after: string | undefined;
  pageSize: number;
  pollIntervalMs: number;
  signal: AbortSignal;
}

/**
 * The feed's non-empty pages from `after` on, fetched as they are consumed: each answer's
 * `Link: <…>; rel="next"` leads on, and an empty page (up to date) is asked again after a pause.
 */
async function* eventPages(
  client: AnimalStoreClient,
  { after, pageSize, pollIntervalMs, signal }: PageWalk,
): AsyncGenerator<StoreEvent[], never> {
  let request = () =>
    client.GET('/events', { params: { query: { after, limit: pageSize } }, signal });
  for (;;) {
    const { events, response } = await readEvents(request, pollIntervalMs, signal);
    const nextQuery = nextPageQuery(response, 'listEvents');
    if (nextQuery === undefined) throw new Error('listEvents: the answer has no next link');
    // Sent exactly as the server wrote it, as for listPets: the position in it is opaque.
    request = () => client.GET('/events', { querySerializer: () => nextQuery, signal });
    if (events.length > 0) yield events;
    else await sleep(pollIntervalMs, undefined, { signal });
  }
}

/** A page of events; a 429 or 503 is asked again after its Retry-After. */
async function readEvents(
  request: () => Promise<{ data?: StoreEvent[]; error?: unknown; response: Response }>,
  pollIntervalMs: number,
  signal: AbortSignal,
): Promise<{ events: StoreEvent[]; response: Response }> {
  for (;;) {
    const { data, error, response } = await request();
    if (data !== undefined) return { events: data, response };
    if (!RETRIED_STATUSES.has(response.status)) throw failure('listEvents', error, response);
    await sleep(retryDelayMs(response, pollIntervalMs), undefined, { signal });
  }
}

/** Retry-After in delay-seconds or as an HTTP date; the poll interval when it has neither. */
function retryDelayMs(response: Response, pollIntervalMs: number): number {
  const value = response.headers.get('Retry-After') ?? '';
  const ms = /^\d+$/.test(value) ? Number(value) * 1_000 : Date.parse(value) - Date.now();
  return Number.isNaN(ms) ? pollIntervalMs : Math.max(0, ms);
}
