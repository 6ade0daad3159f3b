/** Each delay of the schedule is stretched or shrunk by up to this share, at random. */
const JITTER = 0.1;

/** The longest Retry-After honoured: a receiver cannot park a delivery for longer. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** The statuses whose Retry-After a retry honours (docs/events.md, "Webhooks"). */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/** An IMF-fixdate, the HTTP date every sender must use (RFC 9110 §5.6.7). */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * How long to wait before the next attempt of a delivery that has failed `attemptsMade` times, or
 * undefined when that was its last (WEBHOOK_RETRY_SCHEDULE lists the delay before each attempt).
 * The delay varies by up to a tenth either way, so receivers that fail together are not retried
 * together; a Retry-After the receiver sent lengthens it, up to a day.
 * `random` is a number in [0, 1).
 */
export function nextAttemptDelayMs(
  scheduleMs: readonly number[],
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: number,
): number | undefined {
  if (attemptsMade >= scheduleMs.length) return undefined;
  const jittered = Math.round(scheduleMs[attemptsMade] * (1 - JITTER + 2 * JITTER * random));
  if (retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/**
 * The wait a 429 or 503 asks for in its Retry-After (RFC 9110 §10.2.3: delay seconds or an HTTP
 * date), in ms; undefined for other statuses and for a value that is neither.
 */
export function retryAfterMs(
  status: number,
  header: string | undefined,
  now: Date,
): number | undefined {
  if (!RETRY_AFTER_STATUSES.has(status) || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d{1,9}$/.test(value)) return Number(value) * 1000;
  const date = HTTP_DATE.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}
