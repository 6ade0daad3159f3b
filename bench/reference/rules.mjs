// Wire rules of the Animal Store API, hand-written: what the service gets from class-validator,
// its validation pipe and src/errors, with byte-identical messages. Each function returns the
// error message (a string) or undefined when the input is acceptable.
import { hash } from 'node:crypto';

export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
export const STATUSES = ['available', 'pending', 'sold'];

// Messages, as src/pets/dto/* build them with expecting().
const NAME_MUST =
  'name must be a string of 1 to 255 characters, not only whitespace, without U+0000';
const CATEGORY_ID_MUST = `categoryId must be a JSON integer from 1 to ${MAX_ID}`;
const BODY_STATUS_MUST = 'status must be one of available, pending, sold (or absent)';
const PATCH_STATUS_MUST =
  'status must be one of available, pending, sold (a status cannot be removed)';
const LIMIT_MUST = `limit must be a decimal integer from 1 to ${MAX_PAGE_SIZE}`;
const QUERY_STATUS_MUST = 'status must be one of available, pending, sold';
const CURSOR_MUST = 'cursor must be a cursor taken from a Link rel="next" header';
export const PET_ID_ERROR = `petId must be a decimal integer from 1 to ${MAX_ID}`;
export const CATEGORY_ID_ERROR = `categoryId must be a decimal integer from 1 to ${MAX_ID}`;
export const ORDER_ID_ERROR = `orderId must be a decimal integer from 1 to ${MAX_ID}`;
// createOrder's body (src/orders/dto/new-order.dto.ts, order-properties.ts).
const ORDER_PET_ID_MUST = `petId must be a JSON integer from 1 to ${MAX_ID}`;
const MIN_HOLD_SECONDS = 60;
const MAX_HOLD_SECONDS = 86_400;
const HOLD_SECONDS_MUST = `holdSeconds must be a JSON integer from ${MIN_HOLD_SECONDS} to ${MAX_HOLD_SECONDS} (or absent)`;

/** Status code and fixed meaning of every error code (src/errors/error-codes.ts). */
export const ERROR_CODES = {
  VALIDATION_FAILED: {
    status: 400,
    meaning: 'A parameter or the body is invalid; the message names the field.',
  },
  MALFORMED_JSON: { status: 400, meaning: 'The request body is not parsable JSON.' },
  UNAUTHORIZED: { status: 401, meaning: 'The API key is missing, malformed, unknown or revoked.' },
  FORBIDDEN: {
    status: 403,
    meaning:
      'The API key is valid but lacks the scope this operation needs; the message names it. Nothing was changed.',
  },
  NOT_FOUND: { status: 404, meaning: 'No pet with that id, or no such route.' },
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
      'The pet is held by an open order, so it cannot be deleted until the order is completed, cancelled or expires. Nothing was changed.',
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
  GONE: {
    status: 410,
    meaning: 'The operation was removed at its Sunset date; the message names its replacement.',
  },
  PRECONDITION_FAILED: {
    status: 412,
    meaning:
      'If-Match names no current ETag of the pet: it changed since it was read. Nothing was changed.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: 'The request body exceeds the configured size limit.',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'The request body is not application/json.' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    meaning: 'The Idempotency-Key was already used with a different body.',
  },
  RATE_LIMITED: {
    status: 429,
    meaning: 'The API key exceeded its request budget; retry after Retry-After seconds.',
  },
  INTERNAL_ERROR: { status: 500, meaning: 'An unexpected error; nothing about it is exposed.' },
  SERVICE_UNAVAILABLE: { status: 503, meaning: 'The database is unreachable; retry later.' },
};

/** The Error body, serialised as Fastify's default serializer would (JSON.stringify). */
export function errorBody(code, message) {
  return JSON.stringify({ code, message, status: ERROR_CODES[code].status });
}

// ---------------------------------------------------------------------------------------------
// Body of createPet

/** Bodies are flat objects; the service refuses deeper nesting while parsing (http/request-body.ts). */
export const MAX_JSON_DEPTH = 32;

/** Depth of arrays and objects, iterative like the service's, so no input can exhaust the stack. */
export function nestingDepth(root) {
  if (typeof root !== 'object' || root === null) return 0;
  // Fast path for the usual body: an object or array of scalars is depth 1.
  let flat = true;
  for (const key in root) {
    const child = root[key];
    if (typeof child === 'object' && child !== null) {
      flat = false;
      break;
    }
  }
  if (flat) return 1;
  let deepest = 0;
  const pending = [root];
  const depths = [0];
  while (pending.length > 0) {
    const value = pending.pop();
    const depth = depths.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > MAX_JSON_DEPTH) break;
    for (const child of Object.values(value)) {
      pending.push(child);
      depths.push(depth + 1);
    }
  }
  return deepest;
}

/**
 * The validation pipe's shape check (assertPlainObject) for `where` = request body / query string /
 * path: an object, not an array or a scalar.
 */
function shapeError(value, where) {
  if (value === undefined || value === null) return `${where} is required: expected a JSON object`;
  if (typeof value !== 'object' || Array.isArray(value)) {
    return `${where} must be a JSON object, not ${Array.isArray(value) ? 'an array' : typeof value}`;
  }
  return undefined;
}

/**
 * Keys the validation pipe removes before validating and names first (isDroppedKey): those on
 * Object.prototype (__proto__, constructor, toString...) and `prototype`.
 */
function isDroppedKey(key) {
  return key in Object.prototype || key === 'prototype';
}

/** A key as a message names it: as it is, or as a JSON string when it would vanish in the sentence. */
const PLAIN_FIELD_NAME = /^[^\s\p{C}"]+$/u;

function unknownField(key) {
  return `${PLAIN_FIELD_NAME.test(key) ? key : JSON.stringify(key)} is not a known field`;
}

/**
 * Messages for the keys of `object` other than its `known` ones (up to three): the dropped keys first, then
 * the rest (the whitelist's), each group in key order. Undefined when there are none.
 */
function unknownFieldsError(object, known1, known2, known3) {
  let dropped;
  let unknown;
  for (const key in object) {
    if (key === known1 || key === known2 || key === known3) continue;
    if (isDroppedKey(key)) dropped = join(dropped, unknownField(key));
    else unknown = join(unknown, unknownField(key));
  }
  return dropped === undefined
    ? unknown
    : unknown === undefined
      ? dropped
      : `${dropped}; ${unknown}`;
}

/** The pet name rule, as src/http/name-rules.ts isName has it: 1–255 code points, not blank, storable. */
function isPetName(value) {
  if (
    typeof value !== 'string' ||
    value.trim() === '' ||
    value.includes('\u0000') ||
    !value.isWellFormed()
  )
    return false;
  if (value.length <= 255) return true; // code points never outnumber UTF-16 units
  if (value.length > 510) return false; // a code point is at most two units
  let codePoints = 0;
  for (const _ of value) if (++codePoints > 255) return false;
  return true;
}

function isId(value) {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID;
}

/**
 * createPet body rules. Order of messages as the validation pipe reports them: unknown fields first
 * (dropped keys, then the others, each in body order), then name, categoryId, status; joined with "; ".
 */
export function newPetError(body) {
  const shape = shapeError(body, 'request body');
  if (shape !== undefined) return shape;
  let message = unknownFieldsError(body, 'name', 'categoryId', 'status');
  const { name, categoryId, status } = body;
  if (!isPetName(name))
    message = join(message, name === undefined ? 'name is required' : NAME_MUST);
  if (!isId(categoryId))
    message = join(message, categoryId === undefined ? 'categoryId is required' : CATEGORY_ID_MUST);
  if (status !== undefined && !STATUSES.includes(status)) message = join(message, BODY_STATUS_MUST);
  return message;
}

/**
 * updatePet body rules (src/pets/dto/pet-patch.dto.ts, pet-patch.pipe.ts): a merge patch whose
 * present members, null included, pass NewPet's rules, in the order newPetError reports them;
 * then, only when nothing else is wrong, at least one member.
 */
export function petPatchError(body) {
  const shape = shapeError(body, 'request body');
  if (shape !== undefined) return shape;
  let message = unknownFieldsError(body, 'name', 'categoryId', 'status');
  const { name, categoryId, status } = body;
  if (name !== undefined && !isPetName(name)) message = join(message, NAME_MUST);
  if (categoryId !== undefined && !isId(categoryId)) message = join(message, CATEGORY_ID_MUST);
  if (status !== undefined && !STATUSES.includes(status))
    message = join(message, PATCH_STATUS_MUST);
  if (
    message === undefined &&
    name === undefined &&
    categoryId === undefined &&
    status === undefined
  )
    return 'request body must name at least one of name, categoryId, status';
  return message;
}

/**
 * putCategory body rules (src/categories/dto/category-name.dto.ts): unknown fields first, as
 * newPetError reports them, then the name.
 */
export function categoryNameError(body) {
  const shape = shapeError(body, 'request body');
  if (shape !== undefined) return shape;
  const message = unknownFieldsError(body, 'name');
  const { name } = body;
  if (isPetName(name)) return message;
  return join(message, name === undefined ? 'name is required' : NAME_MUST);
}

/**
 * createOrder body rules (src/orders/dto/new-order.dto.ts): unknown fields first, as newPetError
 * reports them, then petId, then holdSeconds, which may be absent but not null.
 */
export function newOrderError(body) {
  const shape = shapeError(body, 'request body');
  if (shape !== undefined) return shape;
  let message = unknownFieldsError(body, 'petId', 'holdSeconds');
  const { petId, holdSeconds } = body;
  if (!isId(petId))
    message = join(message, petId === undefined ? 'petId is required' : ORDER_PET_ID_MUST);
  if (
    holdSeconds !== undefined &&
    !(
      Number.isInteger(holdSeconds) &&
      holdSeconds >= MIN_HOLD_SECONDS &&
      holdSeconds <= MAX_HOLD_SECONDS
    )
  )
    message = join(message, HOLD_SECONDS_MUST);
  return message;
}

function join(message, more) {
  return message === undefined ? more : `${message}; ${more}`;
}

// ---------------------------------------------------------------------------------------------
// Query of listPets and path of getPet

/** field-rules.ts decimalInteger: a canonical decimal from 1 becomes a number, anything else stays as it came. */
function decimalInteger(value) {
  return typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : value;
}

/**
 * listPets query rules. Returns `{ error }` or the parsed `{ limit, status, afterId }`.
 * The query object comes from Fastify's parser (repeated parameters become arrays).
 */
export function parseListQuery(query) {
  const shape = shapeError(query, 'query string');
  if (shape !== undefined) return { error: shape };
  let message = unknownFieldsError(query, 'limit', 'status', 'cursor');
  let limit = DEFAULT_PAGE_SIZE;
  const rawLimit = query.limit;
  if (rawLimit !== undefined) {
    limit = decimalInteger(rawLimit);
    if (!(typeof limit === 'number' && limit >= 1 && limit <= MAX_PAGE_SIZE)) {
      message = join(
        message,
        Array.isArray(rawLimit) ? 'limit must be given at most once' : LIMIT_MUST,
      );
    }
  }
  const status = query.status;
  if (status !== undefined && !STATUSES.includes(status)) {
    message = join(
      message,
      Array.isArray(status) ? 'status must be given at most once' : QUERY_STATUS_MUST,
    );
  }
  let afterId = 0;
  const cursor = query.cursor;
  if (cursor !== undefined) {
    afterId = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
    if (afterId === undefined)
      message = join(
        message,
        Array.isArray(cursor) ? 'cursor must be given at most once' : CURSOR_MUST,
      );
  }
  return message === undefined ? { limit, status, afterId } : { error: message };
}

/**
 * The rule of an id in a path (src/http/path-id.pipe.ts): the id as a number, or undefined when
 * malformed (then PET_ID_ERROR or CATEGORY_ID_ERROR).
 */
export function parsePathId(segment) {
  const id = decimalInteger(segment);
  return isId(id) ? id : undefined;
}

// ---------------------------------------------------------------------------------------------
// Keyset cursor (src/http/page-cursor.ts): base64url of `after:<id>`, canonical encoding only.

export function encodeCursor(lastId) {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor) {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) return undefined;
  const match = /^after:([1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const lastId = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(lastId) && encodeCursor(lastId) === cursor ? lastId : undefined;
}

// ---------------------------------------------------------------------------------------------
// Serialisation of Pet: the key order and omissions of PetDto, as JSON.stringify would write it.

export function petJson(id, name, categoryId, status) {
  return status === null
    ? `{"id":${id},"name":${JSON.stringify(name)},"categoryId":${categoryId}}`
    : `{"id":${id},"name":${JSON.stringify(name)},"categoryId":${categoryId},"status":"${status}"}`;
}

/**
 * The `pet_events` row a change writes, as [type, occurred_at, pet_id, pet, previous]
 * (src/events/pet-events.repository.ts append, src/pets/pets.service.ts): the pet after the change
 * as the API sends it, and for pet.updated the old values of exactly the members that changed, in
 * the Pet's order, a status the pet lacked as null. `pet` and `before` are rows
 * [id, name, category_id, status, …]; PostgreSQL gives the bigint columns as strings.
 */
export function petEventRow(type, pet, before) {
  const [id, name, categoryId, status] = pet;
  let previous = null;
  if (before !== undefined) {
    const changed = {};
    if (before[1] !== name) changed.name = before[1];
    if (Number(before[2]) !== Number(categoryId)) changed.categoryId = Number(before[2]);
    if (before[3] !== status) changed.status = before[3];
    previous = JSON.stringify(changed);
  }
  return [type, new Date().toISOString(), id, petJson(id, name, categoryId, status), previous];
}

/** The Category as putCategory sends it: `{"id","name"}`. */
export function categoryJson(id, name) {
  return `{"id":${id},"name":${JSON.stringify(name)}}`;
}

/**
 * The `pet_events` row of a category.updated, as [type, occurred_at, id, category, previous]
 * (src/categories/categories.repository.ts insertEvent): the Category after the change, and the
 * name before when it had one.
 */
export function categoryEventRow(id, name, previousName) {
  const previous = previousName === undefined ? null : JSON.stringify({ name: previousName });
  return ['category.updated', new Date().toISOString(), id, categoryJson(id, name), previous];
}

// ---------------------------------------------------------------------------------------------
// Orders (src/orders/): the Order's JSON, its events, and the refusals' messages.

/**
 * The Order without its leading `{"id":<id>` (src/orders/order-json.ts): members in the documented
 * order, times as toISOString writes them (as stored on SQLite), closedAt only once closed.
 */
export function orderJsonAfterId(petId, status, createdAt, expiresAt, closedAt) {
  const closed = closedAt === null ? '' : `,"closedAt":"${closedAt}"`;
  return `,"petId":${petId},"status":"${status}","createdAt":"${createdAt}","expiresAt":"${expiresAt}"${closed}}`;
}

/** The Order of a row [id, pet_id, status, created_at, expires_at, closed_at, …] stored as text. */
export function orderJson([id, petId, status, createdAt, expiresAt, closedAt]) {
  return `{"id":${id}${orderJsonAfterId(petId, status, createdAt, expiresAt, closedAt)}`;
}

/** An order's strong ETag: revision 1 while open, 2 once closed (src/orders/order-entity-tag.ts). */
export const orderEntityTag = petEntityTag;

/**
 * The two `pet_events` rows of an order's change, as [type, occurred_at, pet_id, pet, previous]
 * (src/orders/orders.repository.ts writeEvents): `type` with the Order's JSON, then the pet's
 * pet.updated, whose status was available before an order held it and pending after.
 */
export function orderEventRows(type, order, pet, occurredAt) {
  const previous = type === 'order.created' ? '{"status":"available"}' : '{"status":"pending"}';
  return [
    [type, occurredAt, pet[0], order, null],
    ['pet.updated', occurredAt, pet[0], petJson(pet[0], pet[1], pet[2], pet[3]), previous],
  ];
}

/** createOrder's 409 for a pet that exists but could not be held (orders.service.ts refusal). */
export function petNotAvailable(petId, status, held) {
  const what = held
    ? 'is pending, held by an open order'
    : status === null
      ? 'has no status'
      : `is ${status}`;
  return errorBody(
    'PET_NOT_AVAILABLE',
    `Pet ${petId} ${what}: only an available pet can be ordered`,
  );
}

/** The 409 of completing an order that is no longer open (orders.service.ts orderNotOpen). */
export function orderNotOpen(id, status) {
  return errorBody(
    'ORDER_NOT_OPEN',
    `Order ${id} is ${status}: only an open order can be completed or cancelled`,
  );
}

// Conditional requests (src/http/conditional-get.ts, if-match.ts, entity-tags.ts).

/** A pet's strong ETag: its id and revision (src/pets/pet-entity-tag.ts). */
export function petEntityTag(id, revision) {
  return `"${id}-${revision}"`;
}

/** A category's strong ETag, made as a pet's (src/categories/category-entity-tag.ts). */
export const categoryEntityTag = petEntityTag;

/** The weak ETag of an answer: SHA-1 of its Link header (when it has one) and body. */
export function entityTagOf(body, link) {
  return `W/"${hash('sha1', link === undefined ? body : `${link}\n${body}`, 'base64url')}"`;
}

const ENTITY_TAG = /(W\/)?("[\x21\x23-\x7e\x80-\xff]*")/y;

/**
 * The tags an If-Match or If-None-Match value lists (src/http/entity-tags.ts): `*`, a list of
 * `{ opaque, weak }`, or undefined when malformed.
 */
function parseEntityTags(value) {
  if (value.trim() === '*') return '*';
  const tags = [];
  let at = 0;
  while (at < value.length) {
    const char = value[at];
    if (char === ',' || char === ' ' || char === '\t') {
      at += 1;
      continue;
    }
    ENTITY_TAG.lastIndex = at;
    const tag = ENTITY_TAG.exec(value);
    if (tag === null) return undefined;
    tags.push({ opaque: tag[2], weak: tag[1] !== undefined });
    at = ENTITY_TAG.lastIndex;
    while (value[at] === ' ' || value[at] === '\t') at += 1;
    if (at < value.length && value[at] !== ',') return undefined;
  }
  return tags;
}

/** Whether If-None-Match names this ETag (RFC 9110 §13.1.2, weak comparison); invalid: no. */
export function ifNoneMatchMatches(value, etag) {
  if (value === undefined) return false;
  const tags = parseEntityTags(value);
  if (tags === '*') return true;
  const opaque = etag.charCodeAt(0) === 87 /* W */ ? etag.slice(2) : etag;
  return tags?.some((tag) => tag.opaque === opaque) ?? false;
}

/**
 * An If-Match value (src/http/if-match.ts): `*`, or the opaque parts of the strong tags it lists
 * (weak ones never match, so they are left out); undefined when malformed or empty, a 400.
 */
export function parseIfMatch(value) {
  const tags = parseEntityTags(value);
  if (tags === '*') return '*';
  if (tags === undefined || tags.length === 0) return undefined;
  return tags.filter((tag) => !tag.weak).map((tag) => tag.opaque);
}

// ---------------------------------------------------------------------------------------------
// The pet lifecycle (src/pets/pet-lifecycle.ts): which statuses a pet may move to from each, `null`
// being a pet without one; naming the status a pet already has is never a transition.

const STATUS_TRANSITIONS = new Map([
  [null, ['available', 'pending', 'sold']],
  ['available', ['pending', 'sold']],
  ['pending', ['available', 'sold']],
  ['sold', []],
]);

/** The 409 message when pet `id` may not move from `from` to `to`; undefined when it may. */
export function transitionError(id, from, to) {
  const allowed = STATUS_TRANSITIONS.get(from);
  if (allowed.includes(to)) return undefined;
  const now = `Pet ${id} is ${from ?? 'without a status'}`;
  if (allowed.length === 0) return `${now}: its status can no longer change (asked for ${to})`;
  const targets =
    allowed.length === 1 ? allowed[0] : `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
  return `${now}: its status can change to ${targets}, not to ${to}`;
}
