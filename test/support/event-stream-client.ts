/** One message of a Server-Sent Events stream: an event, or a comment line. */
export interface StreamMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface EventStreamClient {
  status: number;
  headers: Headers;
  /** Every message so far, in the order received. */
  messages: StreamMessage[];
  /** Resolves once `count` event messages arrived (comments not counted); rejects after `ms`. */
  events(count: number, ms?: number): Promise<StreamMessage[]>;
  /** Resolves once an event with this id arrived; rejects after `ms`, or when the stream ended. */
  until(id: string, ms?: number): Promise<void>;
  /** The ids of the events so far, in the order received. */
  ids(): string[];
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Reads a `text/event-stream` over a real connection, as a browser's EventSource would, and keeps
 * its messages (WHATWG HTML, "Server-sent events": `field: value` lines, a blank line ends one).
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string>,
): Promise<EventStreamClient> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const messages: StreamMessage[] = [];
  const waiters: (() => void)[] = [];
  const eventCount = () => messages.filter((message) => message.comment === undefined).length;
  const ids = () => messages.flatMap((message) => (message.id === undefined ? [] : [message.id]));

  const read = async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of response.body) {
        text += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) !== -1) {
          messages.push(parseMessage(text.slice(0, end)));
          text = text.slice(end + 2);
        }
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      // Aborted by close().
    }
  };
  const ended = read();

  return {
    status: response.status,
    headers: response.headers,
    messages,
    events: async (count, ms = 5_000) => {
      const deadline = Date.now() + ms;
      while (eventCount() < count) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `${eventCount()} of ${count} events within ${ms} ms; the last messages: ${JSON.stringify(messages.slice(-3))}`,
          );
        await Promise.race([
          new Promise<void>((resolve) => waiters.push(resolve)),
          new Promise((resolve) => setTimeout(resolve, Math.min(left, 100))),
          ended,
        ]);
        if (eventCount() < count && (await isSettled(ended)))
          throw new Error(`the stream ended after ${eventCount()} of ${count} events`);
      }
      return messages.filter((message) => message.comment === undefined).slice(0, count);
    },
    until: async (id, ms = 5_000) => {
      const deadline = Date.now() + ms;
      while (!ids().includes(id)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event ${id} within ${ms} ms; got ${ids().join(' ')}`);
        await Promise.race([
          new Promise<void>((resolve) => waiters.push(resolve)),
          new Promise((resolve) => setTimeout(resolve, Math.min(left, 100))),
          ended,
        ]);
        if (!ids().includes(id) && (await isSettled(ended)))
          throw new Error(`the stream ended without event ${id}; got ${ids().join(' ')}`);
      }
    },
    ids,
    ended,
    close: () => abort.abort(),
  };
}

function parseMessage(block: string): StreamMessage {
  const message: StreamMessage = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) message.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const field = line.slice(0, colon) as 'id' | 'event' | 'data';
      message[field] = line.slice(colon + 2);
    }
  }
  return message;
}

async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise.then(() => true), Promise.resolve(pending)])) !== pending;
}
