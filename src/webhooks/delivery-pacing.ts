/**
 * Requests in flight, as arriving requests find them on average (RequestsInFlight.queueLately),
 * from which clients count as queueing on this instance. At a steady 500 creates a second a
 * request finds three to six; 32 clients that each send again as soon as answered find 16 to 19.
 */
export const CLIENTS_QUEUEING = 10;
/** While clients queue, the pause after a batch is this many times as long as the batch took. */
const PAUSE_PER_BATCH_TIME = 2;
/** The longest pause after a batch, so a saturated instance still delivers every second. */
const MAX_PAUSE_MS = 1_000;

/**
 * How long a subscription's sending waits after a full batch (docs/events.md, "Under load"): not
 * at all unless clients queue; then twice as long as the batch took, so deliveries take at most
 * a third of the time they would and the requests the rest. Nothing owed is dropped: what waits
 * is sent when the requests let up.
 */
export function pauseAfterBatch(batchMs: number, queue: number): number {
  if (queue < CLIENTS_QUEUEING) return 0;
  return Math.min(batchMs * PAUSE_PER_BATCH_TIME, MAX_PAUSE_MS);
}
