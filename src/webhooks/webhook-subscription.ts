import type { EventType } from '../events/pet-event.js';

/**
 * The most webhooks the store may have: each costs an attempt per event, and its id labels
 * metric series, which must stay bounded (docs/events.md, "Webhooks").
 */
export const MAX_WEBHOOKS = 100;

/**
 * The most a count of a webhook's deliveries reads (`pendingDeliveries`, `givenUpDeliveries`, the
 * owed gauge): counting stops there, so a receiver down for days costs each read what one down
 * for a minute costs; the oldest owed event's age tells how far behind it is (docs/events.md,
 * "What a webhook is owed").
 */
export const OWED_COUNTED_UP_TO = 10_000;

/**
 * How long after the delivery worker began a read of a subscription (still there, enabled,
 * leased to it) it may start attempts without reading it again; a delete of a leased webhook
 * answers no sooner than this after its commit. So an attempt that starts after the delete has
 * answered follows a read that saw the delete, and is never made, whichever instance sends
 * (docs/events.md, "How deliveries are owed and sent"); and a receiver that answers at once costs
 * a read per this long, not one per attempt.
 */
export const SUBSCRIPTION_READ_HOLDS_MS = 100;

/** A webhook subscription as stored, without its signing secrets, with its deliveries owed. */
export interface WebhookSubscription {
  id: number;
  url: string;
  /** The event types sent to it; null: every type, including types added later. */
  eventTypes: EventType[] | null;
  createdAt: Date;
  disabledAt: Date | null;
  disabledReason: string | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastFailureReason: string | null;
  /** Deliveries still to be attempted, up to OWED_COUNTED_UP_TO. */
  pendingDeliveries: number;
  /** Deliveries whose every attempt failed, up to OWED_COUNTED_UP_TO. */
  givenUpDeliveries: number;
}

/** A subscription just created or given a new secret: its signing secret, shown this once. */
export interface WebhookSubscriptionWithSecret {
  subscription: WebhookSubscription;
  secret: string;
}

/** `event_types` as stored: NULL for every type, else a JSON array of them. */
export function eventTypesOfColumn(value: unknown): EventType[] | null {
  return value === null ? null : (JSON.parse(value as string) as EventType[]);
}

export function eventTypesColumn(types: EventType[] | null): string | null {
  return types && JSON.stringify(types);
}
