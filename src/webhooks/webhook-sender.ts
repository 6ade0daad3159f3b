import { Injectable } from '@nestjs/common';
import { Dispatcher, request } from 'undici';
import { NO_PUBLIC_ADDRESS, WebhookTargetRefusedError } from './webhook-target-refused.error.js';

/** What one delivery attempt came to. */
export interface AttemptOutcome {
  /** The receiver's status, when it answered within the timeout. */
  status?: number;
  /** The receiver's Retry-After header, as sent. */
  retryAfter?: string;
  /** What went wrong before an answer: `timeout`, `connection refused`, … */
  errorClass?: string;
  latencyMs: number;
}

/** The most of a receiver's answer body read (and thrown away) before the connection is reused. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs one delivery with undici (docs/events.md, "Webhooks"). Redirects are not followed: undici's
 * `request` follows none unless a redirect interceptor is composed in. The dispatcher is the
 * module's: WebhookDispatcher's, which checks each connection's address and closes at shutdown.
 */
@Injectable()
export class WebhookSender {
  constructor(private readonly dispatcher: Dispatcher) {}

  /** One POST, given up after `timeoutMs` or when `cancel` aborts, whichever comes first. */
  async send(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
    cancel?: AbortSignal,
  ): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const latency = () => Math.round(performance.now() - startedAt);
    // One controller and one timer: AbortSignal.timeout and AbortSignal.any make a timer, signals
    // and weak references per attempt, a tenth of a delivery's CPU (docs/performance.md).
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new DOMException('timed out', 'TimeoutError')),
      timeoutMs,
    );
    const cancelled = () => abort.abort(cancel!.reason);
    if (cancel?.aborted) cancelled();
    cancel?.addEventListener('abort', cancelled, { once: true });
    try {
      const answer = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.dispatcher,
        signal: abort.signal,
      });
      await answer.body.dump({ limit: MAX_ANSWER_BYTES });
      const retryAfter = answer.headers['retry-after'];
      return {
        status: answer.statusCode,
        ...(typeof retryAfter === 'string' && { retryAfter }),
        latencyMs: latency(),
      };
    } catch (error) {
      return { errorClass: errorClassOf(error), latencyMs: latency() };
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', cancelled);
    }
  }
}

const ERROR_CLASSES: Record<string, string> = {
  TimeoutError: 'timeout',
  AbortError: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  // The guarded lookup reports these as a refusal; alike, should one come another way.
  ENOTFOUND: NO_PUBLIC_ADDRESS,
  EAI_AGAIN: NO_PUBLIC_ADDRESS,
};

/** A short, fixed name for a failure, from its name or code or its cause's. */
function errorClassOf(error: unknown): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof WebhookTargetRefusedError) return cause.errorClass;
    const { name, code } = cause as Error & { code?: string };
    const known = ERROR_CLASSES[name] ?? (code === undefined ? undefined : ERROR_CLASSES[code]);
    if (known) return known;
    if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return 'TLS error';
  }
  return 'network error';
}
