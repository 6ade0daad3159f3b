/** An order's states (docs/api-design.md, "Orders"): open, then exactly one of the final three. */
export const ORDER_STATUSES = ['open', 'completed', 'cancelled', 'expired'] as const;

export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** How an open order ends: by the buyer paying, letting go, or its deadline passing. */
export type OrderOutcome = Exclude<OrderStatus, 'open'>;

export const ONE_OF_ORDER_STATUSES = `one of ${ORDER_STATUSES.join(', ')}`;
