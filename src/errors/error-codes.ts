/**
 * Stable, machine-readable error codes: the `code` of every Error body, with the status each is
 * sent with (docs/api-design.md, "Errors"). The filter, the error mapping and the OpenAPI document
 * all read this table.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: {
    status: 400,
    meaning: 'A parameter or the body is invalid; the message names the field.',
  },
  MALFORMED_JSON: { status: 400, meaning: 'The request body is not parsable JSON.' },
  UNAUTHORIZED: {
    status: 401,
    meaning: 'The API key is missing, malformed, unknown, expired or revoked.',
  },
  FORBIDDEN: {
    status: 403,
    meaning:
      'The API key is valid but lacks the scope this operation needs; the message names it. Nothing was changed.',
  },
  NOT_FOUND: {
    status: 404,
    meaning:
      'No pet, category, order or webhook with that id (a deleted pet included), or no such route.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: 'The path exists but not with this method; see the Allow header.',
  },
  INVALID_TRANSITION: {
    status: 409,
    meaning:
      "The status change is not allowed from the pet's current status; the message names both and the allowed targets. Nothing was changed.",
  },
  PET_HELD: {
    status: 409,
    meaning:
      'The pet is held by an open order: its status cannot change and it cannot be deleted until the order is completed, cancelled or expires. Nothing was changed.',
  },
  PET_NOT_AVAILABLE: {
    status: 409,
    meaning:
      'Only an available pet can be ordered; the message names the pet’s status (pending, sold, none, or held by an open order). Nothing was changed.',
  },
  ORDER_NOT_OPEN: {
    status: 409,
    meaning:
      'Only an open order before its expiresAt can be completed or cancelled; the message names the order’s status. Nothing was changed.',
  },
  CATEGORY_NAME_TAKEN: {
    status: 409,
    meaning:
      'Another category already has this name (names are unique, compared exactly); the message names it. Nothing was changed.',
  },
  WEBHOOK_LIMIT_REACHED: {
    status: 409,
    meaning:
      'The store already has as many webhooks as it may have; the message says how many. Delete one first. Nothing was changed.',
  },
  GONE: {
    status: 410,
    meaning: 'The operation was removed at its Sunset date; the message names its replacement.',
  },
  CURSOR_EXPIRED: {
    status: 410,
    meaning:
      'The events cursor is older than the retention period (EVENT_RETENTION_DAYS): events after it were deleted. Start again without `after`.',
  },
  PRECONDITION_FAILED: {
    status: 412,
    meaning:
      'If-Match names no current ETag of the pet, category or order: it changed (or was deleted) since it was read. Nothing was changed.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: 'The request body exceeds the configured size limit.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning:
      'The request body is not of a type the operation takes: application/json, or for updatePet also application/merge-patch+json.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    meaning: 'The Idempotency-Key was already used with a different body.',
  },
  RATE_LIMITED: {
    status: 429,
    meaning:
      'The API key exceeded its request budget, or the client address had too many failed authentications; retry after Retry-After seconds.',
  },
  INTERNAL_ERROR: { status: 500, meaning: 'An unexpected error; nothing about it is exposed.' },
  SERVICE_UNAVAILABLE: { status: 503, meaning: 'The database is unreachable; retry later.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];
