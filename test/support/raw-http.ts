import { connect } from 'node:net';
import type { Answer } from './answer-checks.js';

/**
 * Sends bytes exactly as given on a fresh connection, half-closes it, and returns everything the
 * server wrote before closing. Rejects when the server neither answers nor closes in time.
 */
export function exchange(
  baseUrl: string,
  bytes: Buffer | string,
  timeoutMs = 5_000,
): Promise<Buffer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no close within ${timeoutMs} ms; got ${JSON.stringify(String(Buffer.concat(chunks)))}`,
        ),
      );
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    // A reset after the answer is the server closing on a client that still had bytes in flight.
    socket.on('error', () => {});
  });
}

/**
 * The final responses in what a server wrote (interim 1xx responses skipped). `headFirst` says the
 * first request was a HEAD, whose response has a length but no body.
 */
export function parseResponses(raw: Buffer, headFirst = false): Answer[] {
  const answers: Answer[] = [];
  let offset = 0;
  while (offset < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', offset);
    if (headEnd < 0)
      throw new Error(`incomplete response head: ${JSON.stringify(String(raw.subarray(offset)))}`);
    const [statusLine, ...lines] = raw.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1]);
    if (!status) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`);
    const headers: Answer['headers'] = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const previous = headers[name];
      headers[name] = previous === undefined ? value : [previous, value].flat();
    }
    offset = headEnd + 4;
    if (status < 200) continue;
    // A HEAD answer has a length but no body, unless the request never parsed as a HEAD at all.
    const noBody =
      headFirst &&
      answers.length === 0 &&
      (offset === raw.length || raw.includes('HTTP/1.', offset));
    const [body, next] = noBody ? [Buffer.alloc(0), offset] : readBody(raw, offset, headers);
    answers.push({ status, headers, body: body.toString('utf8') });
    offset = next;
  }
  return answers;
}

function readBody(raw: Buffer, offset: number, headers: Answer['headers']): [Buffer, number] {
  const length = headers['content-length'];
  if (typeof length === 'string') {
    const end = offset + Number(length);
    return [raw.subarray(offset, end), end];
  }
  if (headers['transfer-encoding'] !== 'chunked') return [raw.subarray(offset), raw.length];
  const chunks: Buffer[] = [];
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', offset);
    const size = parseInt(raw.subarray(offset, lineEnd).toString('latin1'), 16);
    offset = lineEnd + 2;
    if (!size) return [Buffer.concat(chunks), offset + 2];
    chunks.push(raw.subarray(offset, offset + size));
    offset += size + 2;
  }
}
