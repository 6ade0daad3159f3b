import { Agent, request } from 'node:http';

/** What became of one request: an HTTP answer, or the socket error that ended it without one. */
export interface Outcome {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body?: unknown;
  /** The socket error code (`ECONNREFUSED`, `ECONNRESET`, ...) when no answer came. */
  error?: string;
  ms: number;
}

export interface ApiClient {
  get(path: string, headers?: Record<string, string>): Promise<Outcome>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Outcome>;
  /** A JSON merge patch (the body is sent as application/merge-patch+json). */
  patch(path: string, body: unknown, headers?: Record<string, string>): Promise<Outcome>;
  /** Closes the kept-alive sockets. */
  close(): void;
}

/**
 * A client over real keep-alive sockets (at most `connections` at a time), as a load balancer or an
 * SDK talks to the service. It never throws: every request ends in an Outcome.
 */
export function apiClient(baseUrl: string, key: string | null, connections = 8): ApiClient {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const send = (
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<Outcome> => {
    const startedAt = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const elapsed = () => Math.round(performance.now() - startedAt);
    return new Promise((resolve) => {
      const outgoing = request(new URL(path, baseUrl), {
        method,
        agent,
        headers: {
          ...(key !== null && { authorization: `Bearer ${key}` }),
          ...(payload !== undefined && {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          }),
          ...extraHeaders,
        },
      });
      outgoing.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            headers: response.headers,
            body: parseJson(text),
            ms: elapsed(),
          }),
        );
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? error.message, ms: elapsed() }),
        );
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ error: error.code ?? error.message, ms: elapsed() }),
      );
      outgoing.end(payload);
    });
  };
  return {
    get: (path, headers) => send('GET', path, undefined, headers),
    post: (path, body, headers) => send('POST', path, body, headers),
    patch: (path, body, headers) =>
      send('PATCH', path, body, { 'content-type': 'application/merge-patch+json', ...headers }),
    close: () => agent.destroy(),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Runs `count` tasks with at most `concurrency` in flight; results in task order. */
export async function inParallel<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** The body every 503 carries when the database cannot serve. */
export const DATABASE_UNAVAILABLE = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The database is unavailable; retry later',
  status: 503,
};

/** Tallies outcomes as `{ "201": 12, "503": 3, "ECONNRESET": 1 }`, for the printed figures. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const label = outcome.error ?? String(outcome.status);
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}
