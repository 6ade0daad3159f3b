// Reference implementation of the Animal Store API for the benchmark: the operations the bench races
// (listPets, getPet, createPet, updatePet, deletePet, putCategory, createOrder, completeOrder) with
// the same wire semantics as the service (src/), on bare Fastify + better-sqlite3 or `pg`, no
// framework or ORM in between. It is the ceiling the service is raced against (bench/run.mjs), so
// every choice here is "the fastest thing that is still byte-identical on the wire".
//
//   PORT=3001 DATABASE_PATH=data/animal-store.sqlite node bench/reference/server.mjs
//   PORT=3001 DATABASE_URL=postgres://postgres@127.0.0.1:5432/animal_store_bench node bench/reference/server.mjs
//
// Env: PORT (default 3001), HOST (127.0.0.1), DATABASE_PATH (a SQLite file the service already
// migrated) or DATABASE_URL (a postgres:// database the service already migrated),
// BODY_LIMIT_BYTES (16384), ORDER_HOLD_SECONDS (900), LOG_LEVEL (info). The parity tests are in
// test/e2e/reference-parity/.
// Every change writes its `pet_events` row in the change's transaction, as the service does
// (store.mjs, pg-store.mjs; test/e2e/reference-parity/pet-events.e2e-spec.ts).
// Not mirrored: rate limits (the bench and the parity test run the service with
// RATE_LIMIT_PER_MINUTE=0), Idempotency-Key (neither sends one), key expiry (neither's keys
// expire), the /docs routes (so another method on /docs is a 404 here, a 405 in the service), and
// the operations the bench does not race: the other category operations, listPets' categoryId,
// getInventory, getOrder, listOrders, cancelOrder, the event feed and webhooks (their paths are a
// 404 here), and the orders' expiry sweep (a lapsed hold is expired by the write that meets it).
import Fastify, { LogController } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import {
  CATEGORY_ID_ERROR,
  categoryEntityTag,
  categoryJson,
  categoryNameError,
  encodeCursor,
  entityTagOf,
  errorBody,
  ERROR_CODES,
  ifNoneMatchMatches,
  MAX_JSON_DEPTH,
  nestingDepth,
  newOrderError,
  newPetError,
  ORDER_ID_ERROR,
  orderEntityTag,
  orderNotOpen,
  parseIfMatch,
  parseListQuery,
  parsePathId,
  PET_ID_ERROR,
  petEntityTag,
  petJson,
  petNotAvailable,
  petPatchError,
  transitionError,
} from './rules.mjs';
import { openPgStore } from './pg-store.mjs';
import { openStore } from './store.mjs';

const HOST = process.env.HOST || '127.0.0.1';
const PORT = integerFromEnv('PORT', 3001);
const DATABASE_PATH = process.env.DATABASE_PATH;
const DATABASE_URL = process.env.DATABASE_URL;
const BODY_LIMIT_BYTES = integerFromEnv('BODY_LIMIT_BYTES', 16384);
/** How long createOrder holds a pet when the body names no holdSeconds, as the service's setting. */
const ORDER_HOLD_SECONDS = integerFromEnv('ORDER_HOLD_SECONDS', 900);
const LOG_LEVEL = process.env.LOG_LEVEL || 'info';
if (!DATABASE_PATH && !DATABASE_URL?.startsWith('postgres'))
  fail('DATABASE_PATH (SQLite) or DATABASE_URL (postgres://) must name a migrated database');

function integerFromEnv(name, fallback) {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value))
    fail(`${name} must be a non-negative integer (got ${JSON.stringify(value)})`);
  return Number(value);
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const JSON_TYPE = 'application/json; charset=utf-8';
const PETS_PATH = '/v1/pets';
const PET_PATH = `${PETS_PATH}/:petId`;
const CATEGORIES_PATH = '/v1/categories';
const CATEGORY_PATH = `${CATEGORIES_PATH}/:categoryId`;
const ORDERS_PATH = '/v1/orders';
const COMPLETE_ORDER_PATH = `${ORDERS_PATH}/:orderId/complete`;
const WWW_AUTHENTICATE = 'Bearer realm="animal-store"';

/** getPet's sunset (src/pets/get-pet-deprecation.ts): 410 GONE from this instant on. */
const SUNSET = new Date('2030-12-05T00:00:00Z');

/** getPet's deprecation headers, on every response of that route. */
const DEPRECATION = {
  deprecation: `@${Math.floor(Date.parse('2026-11-21T00:00:00Z') / 1000)}`,
  sunset: SUNSET.toUTCString(),
  link: `<${PETS_PATH}>; rel="successor-version"`,
};

/** An incoming X-Request-Id is echoed only when it is short and plain (src/http/request-id.ts). */
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

// Error bodies that never vary, serialised once.
const MISSING_KEY = errorBody(
  'UNAUTHORIZED',
  'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
);
const INVALID_KEY = errorBody('UNAUTHORIZED', 'Invalid API key');
// The guard's 403s (src/auth/api-key.guard.ts): a valid key without the operation's scope.
const LACKS_SCOPE = new Map(
  ['pets:read', 'pets:write', 'orders:write'].map((scope) => [
    scope,
    errorBody('FORBIDDEN', `This API key lacks the scope ${scope}`),
  ]),
);
const FORBIDDEN = new Set(LACKS_SCOPE.values());
const NO_SUCH_ROUTE = errorBody('NOT_FOUND', 'No such route');
const MALFORMED_URL = errorBody('VALIDATION_FAILED', 'The request URL is malformed');
const BAD_PET_ID = errorBody('VALIDATION_FAILED', PET_ID_ERROR);
const BAD_CATEGORY_ID = errorBody('VALIDATION_FAILED', CATEGORY_ID_ERROR);
const BAD_ORDER_ID = errorBody('VALIDATION_FAILED', ORDER_ID_ERROR);
const INTERNAL_ERROR = errorBody('INTERNAL_ERROR', 'Internal server error');
const UNAVAILABLE = errorBody('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later');
const DATABASE_UNAVAILABLE = errorBody(
  'SERVICE_UNAVAILABLE',
  'The database is unavailable; retry later',
);
const GONE = errorBody(
  'GONE',
  `This operation was removed on ${DEPRECATION.sunset}; use listPets (GET ${PETS_PATH}) with the status filter instead`,
);
const HOST_COUNT = errorBody('VALIDATION_FAILED', 'A request must have exactly one Host header');
const BAD_IF_MATCH = errorBody(
  'VALIDATION_FAILED',
  'If-Match must be * or a comma-separated list of entity tags, such as "42-3"',
);

/** A body the parser refused: reported only after authentication, as the service does. */
class RejectedBody {
  constructor(status, body, headers) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}
const UNSUPPORTED_MEDIA_TYPE = new RejectedBody(
  415,
  errorBody('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'),
);
/** The body types updatePet takes, merge patch first (src/pets/pets.controller.ts). */
const MERGE_PATCH_TYPE = 'application/merge-patch+json';
const PATCH_BODY_TYPES = [MERGE_PATCH_TYPE, 'application/json'];
/** updatePet's 415 names both, with Accept-Patch (src/http/request-body.ts refused). */
const PATCH_UNSUPPORTED_MEDIA_TYPE = new RejectedBody(
  415,
  errorBody('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${PATCH_BODY_TYPES.join(' or ')}`),
  { 'accept-patch': PATCH_BODY_TYPES.join(', ') },
);
const ENCODED_BODY = new RejectedBody(
  415,
  errorBody(
    'UNSUPPORTED_MEDIA_TYPE',
    'Content-Encoding is not supported: send the body uncompressed',
  ),
  { 'accept-encoding': 'identity' },
);
const NOT_UTF8 = new RejectedBody(
  400,
  errorBody('MALFORMED_JSON', 'Request body is not valid UTF-8'),
);
const MALFORMED_JSON = new RejectedBody(
  400,
  errorBody('MALFORMED_JSON', 'Request body is not valid JSON'),
);
const TOO_DEEP = new RejectedBody(
  400,
  errorBody(
    'VALIDATION_FAILED',
    `request body must not nest more than ${MAX_JSON_DEPTH} levels deep`,
  ),
);

// SQLite answers at once and PostgreSQL with a promise: withAnswer() takes either, so the SQLite
// reference pays no promise for being able to run on PostgreSQL.
const store = DATABASE_PATH ? openStore(DATABASE_PATH) : openPgStore(DATABASE_URL);

/** Calls `use` with the store's answer: at once when it is a value, once it arrives when a promise. */
function withAnswer(answer, use) {
  return answer instanceof Promise ? answer.then(use) : use(answer);
}

// The service's logger (src/logging/logger.ts), redaction included: the same work per line, and
// the same asynchronous writes, so a request never waits for stdout.
const logDestination = pino.destination({ sync: false });
const logger = pino(
  {
    level: LOG_LEVEL,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        'authorization',
        'headers.authorization',
        'req.headers.authorization',
        'apiKey',
        '*.apiKey',
      ],
      censor: '[redacted]',
    },
  },
  logDestination,
);

/** One line per request when it completes: the service's RequestLogController. */
class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  incomingRequest() {}

  requestCompleted(error, request, reply) {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) request.log.error({ ...line, err: error }, 'request');
    else request.log.info(line, 'request');
  }
}
const requestLog = new RequestLog();

let closing = false;

/** The service's limit on sending a whole request, headers and body (http-adapter.ts). */
const REQUEST_TIMEOUT_MS = 10_000;

const app = Fastify({
  loggerInstance: logger,
  logController: requestLog,
  bodyLimit: BODY_LIMIT_BYTES,
  requestTimeout: REQUEST_TIMEOUT_MS,
  http: {
    headersTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
    // The Host rule is checkRequest's, with the Error body, instead of Node's bare 400.
    requireHostHeader: false,
  },
  requestIdHeader: false,
  genReqId: (raw) => {
    const incoming = raw.headers['x-request-id'];
    return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  },
  // Same router limits as the service, so over-long ids fail the same way.
  routerOptions: { maxParamLength: 256 },
  return503OnClosing: false,
  // A URL the router cannot take (bad percent-encoding, over-long segment): runs before routing.
  frameworkErrors: (_error, request, reply) => {
    reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
    send(request, reply, 400, MALFORMED_URL);
  },
  clientErrorHandler: answerUnparsableRequest,
});

// ---------------------------------------------------------------------------------------------
// Responses

/** Every response leaves through here: status, JSON body and the headers every response carries. */
function send(request, reply, status, body, cacheControl = 'no-store') {
  reply.code(status);
  if (status !== 304 && status !== 204) reply.header('content-type', JSON_TYPE);
  reply.header('cache-control', cacheControl);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-request-id', request.id);
  if (closing) reply.header('connection', 'close');
  return reply.send(body);
}

function setDeprecationHeaders(reply) {
  reply.header('deprecation', DEPRECATION.deprecation);
  reply.header('sunset', DEPRECATION.sunset);
  reply.header('link', DEPRECATION.link);
}

function sendGetPet(request, reply, status, body) {
  setDeprecationHeaders(reply);
  return send(request, reply, status, body);
}

/** getPet's answers carry its deprecation headers; the other operation on its path's do not. */
function isGetPet(request) {
  const { url, method } = request.routeOptions;
  return url === PET_PATH && method !== 'PATCH' && method !== 'DELETE';
}

/**
 * Route hook of listPets and getPet: Fastify types the body a 304 HEAD keeps as text/plain; a 304
 * has no Content-Type.
 */
function noTypeOn304(_request, reply, payload, done) {
  if (reply.statusCode === 304) reply.removeHeader('content-type');
  done(null, payload);
}

/**
 * A 200 of listPets or getPet, its other headers set: with its ETag (getPet's the pet's, listPets'
 * computed from what it sends) and private, no-cache, or a 304 without body or Content-Type when
 * If-None-Match names the ETag (src/http/conditional-get.ts). A HEAD keeps the body for Fastify's
 * HEAD handler, which sends the 200's Content-Length and no body.
 */
function sendCacheable(request, reply, body, etag = entityTagOf(body, reply.getHeader('link'))) {
  reply.header('etag', etag);
  const status = ifNoneMatchMatches(request.headers['if-none-match'], etag) ? 304 : 200;
  const sent = status === 200 || request.method === 'HEAD' ? body : undefined;
  return send(request, reply, status, sent, 'private, no-cache');
}

function unauthorized(request, reply, body, sender) {
  reply.header('www-authenticate', WWW_AUTHENTICATE);
  return sender(request, reply, 401, body);
}

/** authError's refusal: a 403 for a key without the scope, else a 401 with its challenge. */
function refuse(request, reply, body, sender) {
  if (FORBIDDEN.has(body)) return sender(request, reply, 403, body);
  return unauthorized(request, reply, body, sender);
}

/**
 * The key check of the service's guard + passport-http-bearer: the header must be exactly
 * "<scheme> <token>" (one space), the scheme Bearer in any case, and the key must have `scope`
 * (pets:read or pets:write, as the operation's @RequireScope). Returns the 401 or 403 body or
 * undefined (or a promise of it, when the key had to be looked up on PostgreSQL).
 */
function authError(request, scope) {
  const header = request.headers.authorization;
  if (header === undefined) return MISSING_KEY;
  if (header.length < 8 || header.charCodeAt(6) !== 32 || header.indexOf(' ', 7) !== -1)
    return INVALID_KEY;
  if (!/^Bearer$/i.test(header.slice(0, 6))) return INVALID_KEY;
  return withAnswer(store.authenticate(header.slice(7)), (scopes) => {
    if (scopes === false) return INVALID_KEY;
    if (scopes.includes(scope)) return undefined;
    return LACKS_SCOPE.get(scope);
  });
}

// ---------------------------------------------------------------------------------------------
// Body parsing: application/json, and application/merge-patch+json on updatePet. Refusals are
// carried to the handler (RejectedBody), so a request without a valid key gets 401 before any
// 400/415, exactly as in the service.

app.removeAllContentTypeParsers();
app.addContentTypeParser(
  ['application/json', MERGE_PATCH_TYPE],
  { parseAs: 'buffer' },
  (request, body, done) => {
    // A merge patch anywhere but on updatePet is refused as any other type (src/http/request-body.ts).
    if (request.mediaType === MERGE_PATCH_TYPE && request.method !== 'PATCH')
      return done(null, UNSUPPORTED_MEDIA_TYPE);
    if (body.length === 0) return done(null, undefined);
    const coding = request.headers['content-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity')
      return done(null, ENCODED_BODY);
    if (!isUtf8(body)) return done(null, NOT_UTF8);
    let value;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return done(null, MALFORMED_JSON);
    }
    done(null, nestingDepth(value) > MAX_JSON_DEPTH ? TOO_DEEP : value);
  },
);
app.addContentTypeParser('*', (_request, _payload, done) => done(null, UNSUPPORTED_MEDIA_TYPE));

// ---------------------------------------------------------------------------------------------
// What the HTTP layer refuses or repairs before routes (src/http/request-checks.ts checkRequest)

/**
 * HTTP/1.1 needs exactly one Host header, and no request may carry two; a Content-Type that is not a media type counts as none
 * (Fastify would otherwise answer 415 before the key check, even on an unknown route).
 */
app.addHook('onRequest', (request, reply, done) => {
  const raw = request.raw;
  const hosts = countHost(raw.rawHeaders);
  if (hosts > 1 || (hosts === 0 && raw.httpVersion === '1.1')) {
    reply.header('connection', 'close');
    const sender = isGetPet(request) ? sendGetPet : send;
    // Answered here: neither done() nor a returned reply (a thenable Fastify would wait on).
    sender(request, reply, 400, HOST_COUNT);
    return;
  }
  if (raw.headers['content-type'] !== undefined && request.mediaType === undefined)
    delete raw.headers['content-type'];
  done();
});

const HOST_HEADER = /^host$/i;

function countHost(rawHeaders) {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (HOST_HEADER.test(rawHeaders[i])) count++;
  return count;
}

// Node answers an unknown Expect with a bare 417 and drops a CONNECT silently; the service serves
// the first as if the header were absent and refuses the second with the Error body.
app.server.on('checkExpectation', (request, response) =>
  app.server.emit('request', request, response),
);
app.server.on('connect', (_request, socket) =>
  endWithError(socket, 'CONNECT is not supported: this server is not a proxy'),
);

// ---------------------------------------------------------------------------------------------
// Routes

app.get(PETS_PATH, { onSend: noTypeOn304 }, (request, reply) =>
  withAnswer(authError(request, 'pets:read'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const query = parseListQuery(request.query);
    if (query.error !== undefined)
      return send(request, reply, 400, errorBody('VALIDATION_FAILED', query.error));
    // One row more than asked says whether a next page exists, without a count.
    return withAnswer(store.page(query.afterId, query.status, query.limit + 1), (rows) =>
      sendPage(request, reply, query, rows),
    );
  }),
);

function sendPage(request, reply, { limit, status }, rows) {
  const count = Math.min(rows.length, limit);
  let body = '[';
  for (let i = 0; i < count; i++) {
    const row = rows[i];
    if (i > 0) body += ',';
    body += petJson(row[0], row[1], row[2], row[3]);
  }
  body += ']';
  if (rows.length > limit) {
    const statusParam = status === undefined ? '' : `&status=${status}`;
    reply.header(
      'link',
      `<${PETS_PATH}?limit=${limit}${statusParam}&cursor=${encodeCursor(rows[limit - 1][0])}>; rel="next"`,
    );
  }
  return sendCacheable(request, reply, body);
}

app.post(PETS_PATH, (request, reply) =>
  withAnswer(authError(request, 'pets:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const pet = request.body;
    if (pet instanceof RejectedBody) {
      if (pet.headers !== undefined) reply.headers(pet.headers);
      return send(request, reply, pet.status, pet.body);
    }
    const invalid = newPetError(pet);
    if (invalid !== undefined)
      return send(request, reply, 400, errorBody('VALIDATION_FAILED', invalid));
    const status = pet.status ?? null;
    return withAnswer(store.insert(pet.name, pet.categoryId, status), (id) => {
      // A new pet is at revision 1 (src/database/migrations/1795700000000-pet-revision.ts).
      reply.header('etag', petEntityTag(id, 1));
      return send(request, reply, 201, petJson(id, pet.name, pet.categoryId, status));
    });
  }),
);

app.get(PET_PATH, { onSend: noTypeOn304 }, (request, reply) => {
  // The router matches "/v1/pets/" with an empty petId; Nest's adapter sends that to the 404 handler.
  if (request.params.petId === '') return reply.callNotFound();
  return withAnswer(authError(request, 'pets:read'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, sendGetPet);
    if (Date.now() >= SUNSET.getTime()) return sendGetPet(request, reply, 410, GONE);
    const id = parsePathId(request.params.petId);
    if (id === undefined) return sendGetPet(request, reply, 400, BAD_PET_ID);
    return withAnswer(store.byId(id), (row) => {
      if (row === undefined)
        return sendGetPet(request, reply, 404, errorBody('NOT_FOUND', `No pet with id ${id}`));
      setDeprecationHeaders(reply);
      const body = petJson(row[0], row[1], row[2], row[3]);
      return sendCacheable(request, reply, body, petEntityTag(row[0], row[4]));
    });
  });
});

/**
 * updatePet (src/pets/pets.controller.ts updatePet, pets.service.ts update): a merge patch of
 * name, categoryId and status, checked and written in one transaction. Refusals in the service's
 * order: 401, 403, then If-Match, the body and the id (the order Nest resolves the handler's
 * parameters in), then 404, 412 and 409 from the locked row.
 */
app.patch(PET_PATH, (request, reply) => {
  if (request.params.petId === '') return reply.callNotFound();
  return withAnswer(authError(request, 'pets:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const ifMatchField = request.headers['if-match'];
    const ifMatch = ifMatchField === undefined ? undefined : parseIfMatch(ifMatchField);
    if (ifMatchField !== undefined && ifMatch === undefined)
      return send(request, reply, 400, BAD_IF_MATCH);
    let patch = request.body;
    if (patch instanceof RejectedBody) {
      if (patch === UNSUPPORTED_MEDIA_TYPE) patch = PATCH_UNSUPPORTED_MEDIA_TYPE;
      if (patch.headers !== undefined) reply.headers(patch.headers);
      return send(request, reply, patch.status, patch.body);
    }
    const invalid = petPatchError(patch);
    if (invalid !== undefined)
      return send(request, reply, 400, errorBody('VALIDATION_FAILED', invalid));
    const id = parsePathId(request.params.petId);
    if (id === undefined) return send(request, reply, 400, BAD_PET_ID);
    const answer = store.update(id, (row) => changedRow(id, row, patch, ifMatch));
    return withAnswer(answer, (outcome) => {
      if (!Array.isArray(outcome)) return send(request, reply, outcome.status, outcome.body);
      reply.header('etag', petEntityTag(outcome[0], outcome[4]));
      return send(request, reply, 200, petJson(outcome[0], outcome[1], outcome[2], outcome[3]));
    });
  });
});

/**
 * deletePet (src/pets/pets.controller.ts deletePet, pets.service.ts delete): refusals in the
 * service's order, 401, 403, then If-Match and the id (the order Nest resolves the handler's
 * parameters in), then 404, 412 and 409 from the locked row; the pet and its pet.deleted event
 * go in one transaction.
 */
app.delete(PET_PATH, (request, reply) => {
  if (request.params.petId === '') return reply.callNotFound();
  return withAnswer(authError(request, 'pets:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const ifMatchField = request.headers['if-match'];
    const ifMatch = ifMatchField === undefined ? undefined : parseIfMatch(ifMatchField);
    if (ifMatchField !== undefined && ifMatch === undefined)
      return send(request, reply, 400, BAD_IF_MATCH);
    const id = parsePathId(request.params.petId);
    if (id === undefined) return send(request, reply, 400, BAD_PET_ID);
    const answer = store.remove(id, (row, held) => deletionRefusal(id, row, held, ifMatch));
    return withAnswer(answer, (refusal) => {
      if (refusal !== undefined) return send(request, reply, refusal.status, refusal.body);
      return send(request, reply, 204, undefined);
    });
  });
});

/** Why deletePet may not remove pet `id` given its locked row and hold, or undefined when it may. */
function deletionRefusal(id, row, held, ifMatch) {
  if (row === undefined)
    return { status: 404, body: errorBody('NOT_FOUND', `No pet with id ${id}`) };
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.includes(petEntityTag(id, row[4])))
    return { status: 412, body: preconditionFailed(id) };
  if (held)
    return {
      status: 409,
      body: errorBody(
        'PET_HELD',
        `Pet ${id} is held by an open order: complete or cancel the order first`,
      ),
    };
  return undefined;
}

/**
 * What updatePet does to pet `id`, given its locked row [id, name, category_id, status, revision]
 * (undefined when absent): a refusal `{ status, body }`, the row itself when the patch changes
 * nothing (nothing is written), or the row to store.
 */
function changedRow(id, row, { name, categoryId, status }, ifMatch) {
  if (row === undefined)
    return { status: 404, body: errorBody('NOT_FOUND', `No pet with id ${id}`) };
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.includes(petEntityTag(id, row[4])))
    return { status: 412, body: preconditionFailed(id) };
  if (status !== undefined) {
    const refused = transitionError(id, row[3], status);
    if (refused !== undefined)
      return { status: 409, body: errorBody('INVALID_TRANSITION', refused) };
  }
  // PostgreSQL gives the bigint category_id as a string.
  const next = [row[0], name ?? row[1], categoryId ?? Number(row[2]), status ?? row[3], row[4]];
  return next[1] === row[1] && next[2] === Number(row[2]) && next[3] === row[3] ? row : next;
}

function preconditionFailed(id, what = 'pet') {
  return errorBody(
    'PRECONDITION_FAILED',
    `If-Match does not match the current ETag of ${what} ${id}: read the ${what} again, then retry`,
  );
}

/**
 * putCategory (src/categories/categories.controller.ts putCategory, categories.service.ts put):
 * refusals in the service's order, 401, 403, then If-Match, the body and the id (as on updatePet,
 * whose parameters come in the same order), then 412 from the locked row and 409 from the UNIQUE
 * constraint. A new name writes its category.updated event in the same transaction.
 */
app.put(CATEGORY_PATH, (request, reply) => {
  if (request.params.categoryId === '') return reply.callNotFound();
  return withAnswer(authError(request, 'pets:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const ifMatchField = request.headers['if-match'];
    const ifMatch = ifMatchField === undefined ? undefined : parseIfMatch(ifMatchField);
    if (ifMatchField !== undefined && ifMatch === undefined)
      return send(request, reply, 400, BAD_IF_MATCH);
    const body = request.body;
    if (body instanceof RejectedBody) {
      if (body.headers !== undefined) reply.headers(body.headers);
      return send(request, reply, body.status, body.body);
    }
    const invalid = categoryNameError(body);
    if (invalid !== undefined)
      return send(request, reply, 400, errorBody('VALIDATION_FAILED', invalid));
    const id = parsePathId(request.params.categoryId);
    if (id === undefined) return send(request, reply, 400, BAD_CATEGORY_ID);
    const { name } = body;
    const answer = store.putCategory(id, name, (current) => renameRefusal(id, current, ifMatch));
    return withAnswer(answer, (outcome) => {
      if (outcome === undefined) return send(request, reply, 409, nameTaken(name));
      if (!Array.isArray(outcome)) return send(request, reply, outcome.status, outcome.body);
      const [, , revision, created] = outcome;
      reply.header('etag', categoryEntityTag(id, revision));
      return send(request, reply, created ? 201 : 200, categoryJson(id, name));
    });
  });
});

/**
 * The 412 when If-Match does not name the ETag of category `id`, given its locked row while it
 * has a name: an id without a name matches no tag, not even `*`. Undefined when the PUT may go on.
 */
function renameRefusal(id, current, ifMatch) {
  if (ifMatch === undefined) return undefined;
  if (
    current !== undefined &&
    (ifMatch === '*' || ifMatch.includes(categoryEntityTag(id, current[2])))
  )
    return undefined;
  return { status: 412, body: preconditionFailed(id, 'category') };
}

function nameTaken(name) {
  return errorBody(
    'CATEGORY_NAME_TAKEN',
    `Another category is already named ${JSON.stringify(name)}: choose another name`,
  );
}

/**
 * createOrder (src/orders/orders.controller.ts createOrder, orders.service.ts place): refusals in
 * the service's order, 401, 403, the body (400, 413, 415), then from the pet: 400 when there is
 * none, 409 when it is not available. The hold, the order and their events go together (store's
 * placeOrder); a pet whose hold lapsed is released first.
 */
app.post(ORDERS_PATH, (request, reply) =>
  withAnswer(authError(request, 'orders:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const order = request.body;
    if (order instanceof RejectedBody) {
      if (order.headers !== undefined) reply.headers(order.headers);
      return send(request, reply, order.status, order.body);
    }
    const invalid = newOrderError(order);
    if (invalid !== undefined)
      return send(request, reply, 400, errorBody('VALIDATION_FAILED', invalid));
    const { petId, holdSeconds = ORDER_HOLD_SECONDS } = order;
    const now = Date.now();
    const createdAt = new Date(now).toISOString();
    const expiresAt = new Date(now + holdSeconds * 1000).toISOString();
    const answer = store.placeOrder(petId, createdAt, expiresAt, (status, held) =>
      placeRefusal(petId, status, held),
    );
    return withAnswer(answer, (outcome) => {
      if (!Array.isArray(outcome)) return send(request, reply, outcome.status, outcome.body);
      reply.header('etag', orderEntityTag(outcome[0], 1));
      return send(request, reply, 201, outcome[1]);
    });
  }),
);

/** Why pet `petId`, with `status` (undefined: no such pet) and held or not, could not be ordered. */
function placeRefusal(petId, status, held) {
  if (status === undefined)
    return { status: 400, body: errorBody('VALIDATION_FAILED', `petId ${petId} names no pet`) };
  return { status: 409, body: petNotAvailable(petId, status, held) };
}

/**
 * completeOrder (src/orders/orders.controller.ts completeOrder, orders.service.ts complete):
 * refusals in the service's order, 401, 403, then If-Match and the id (the order Nest resolves
 * the handler's parameters in), then 404, 412 and 409 from the order, which an open order past
 * its deadline meets expired. The order, its pet sold and their events go together.
 */
app.post(COMPLETE_ORDER_PATH, (request, reply) => {
  if (request.params.orderId === '') return reply.callNotFound();
  return withAnswer(authError(request, 'orders:write'), (denied) => {
    if (denied !== undefined) return refuse(request, reply, denied, send);
    const ifMatchField = request.headers['if-match'];
    const ifMatch = ifMatchField === undefined ? undefined : parseIfMatch(ifMatchField);
    if (ifMatchField !== undefined && ifMatch === undefined)
      return send(request, reply, 400, BAD_IF_MATCH);
    const id = parsePathId(request.params.orderId);
    if (id === undefined) return send(request, reply, 400, BAD_ORDER_ID);
    const now = new Date().toISOString();
    const answer = store.completeOrder(id, now, (row) => closingRefusal(id, row, ifMatch));
    return withAnswer(answer, (outcome) => {
      if (!Array.isArray(outcome)) return send(request, reply, outcome.status, outcome.body);
      // A completed order is at revision 2.
      reply.header('etag', orderEntityTag(id, 2));
      return send(request, reply, 200, outcome[1]);
    });
  });
});

/**
 * Why order `id` may not be completed given its row [id, pet_id, status, …, revision] (undefined
 * when absent), or undefined when it may.
 */
function closingRefusal(id, row, ifMatch) {
  if (row === undefined)
    return { status: 404, body: errorBody('NOT_FOUND', `No order with id ${id}`) };
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.includes(orderEntityTag(id, row[6])))
    return { status: 412, body: preconditionFailed(id, 'order') };
  if (row[2] !== 'open') return { status: 409, body: orderNotOpen(id, row[2]) };
  return undefined;
}

// Public probes, as the service's health controller (only the readiness contract matters here).
app.get('/health/live', (request, reply) => send(request, reply, 200, '{"status":"ok"}'));
app.get('/health/ready', async (request, reply) => {
  const startedAt = Date.now();
  try {
    await store.ping();
  } catch {
    reply.header('retry-after', '1');
    return send(request, reply, 503, UNAVAILABLE);
  }
  const database = `{"status":"up","responseTime":${Date.now() - startedAt}}`;
  const body = `{"status":"ok","info":{"database":${database}},"error":{},"details":{"database":${database}}}`;
  return send(request, reply, 200, body);
});

// ---------------------------------------------------------------------------------------------
// Unmatched routes and errors (the service's AllExceptionsFilter)

/** Methods served on a request target, as the service's RouteTable lists them (HEAD comes with GET). */
function allowedMethods(target) {
  const path = routedPath(target);
  if (path === PETS_PATH) return 'GET, HEAD, POST';
  if (path.startsWith('/v1/pets/') && path.indexOf('/', 9) === -1 && path.length > 9)
    return 'DELETE, GET, HEAD, PATCH';
  if (path === CATEGORIES_PATH) return 'GET, HEAD';
  if (path.startsWith(`${CATEGORIES_PATH}/`) && path.indexOf('/', 15) === -1 && path.length > 15)
    return 'DELETE, GET, HEAD, PUT';
  if (path === ORDERS_PATH) return 'GET, HEAD, POST';
  if (/^\/v1\/orders\/[^/]+$/.test(path)) return 'GET, HEAD';
  if (/^\/v1\/orders\/[^/]+\/(?:complete|cancel)$/.test(path)) return 'POST';
  if (path === '/health/live' || path === '/health/ready') return 'GET, HEAD';
  return undefined;
}

/**
 * The path the router matched, as route-table.ts reads it: no scheme and authority, no query or
 * fragment, escapes decoded by decodeURI (kept as they are when that fails).
 */
function routedPath(target) {
  const path = target.replace(/^https?:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0] || '/';
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

app.setNotFoundHandler((request, reply) => {
  const allow = allowedMethods(request.url);
  if (allow === undefined || allow.split(', ').includes(request.method))
    return send(request, reply, 404, NO_SUCH_ROUTE);
  reply.header('allow', allow);
  const message = `Method ${request.method} is not allowed here; use ${allow}`;
  return send(request, reply, 405, errorBody('METHOD_NOT_ALLOWED', message));
});

/** The error code for a bare status, as error-mapping.ts picks it: the first code with that status. */
const CODE_FOR_STATUS = new Map(
  Object.keys(ERROR_CODES)
    .reverse()
    .map((code) => [ERROR_CODES[code].status, code]),
);
const FIXED_MESSAGES = {
  VALIDATION_FAILED: 'The request is malformed',
  UNAUTHORIZED: 'Invalid API key',
  NOT_FOUND: 'The requested resource could not be found',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type must be application/json',
};

// Errors Fastify raises while reading a request (body too large, bad Content-Length...) and bugs.
app.setErrorHandler((error, request, reply) => {
  const sender = isGetPet(request) ? sendGetPet : send;
  const status = error?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_FOR_STATUS.get(status) ?? 'VALIDATION_FAILED';
    if (code === 'UNAUTHORIZED') return unauthorized(request, reply, INVALID_KEY, sender);
    const message =
      code === 'PAYLOAD_TOO_LARGE'
        ? `Request body exceeds ${BODY_LIMIT_BYTES} bytes`
        : (FIXED_MESSAGES[code] ?? ERROR_CODES[code].meaning);
    return sender(request, reply, ERROR_CODES[code].status, errorBody(code, message));
  }
  // A 5xx: logged with its cause, which never reaches the client.
  request.log.error({ err: error }, 'request failed');
  if (status === 503 || store.isUnavailable(error)) {
    reply.header('retry-after', '1');
    return sender(request, reply, 503, status === 503 ? UNAVAILABLE : DATABASE_UNAVAILABLE);
  }
  return sender(request, reply, 500, INTERNAL_ERROR);
});

/**
 * Bytes Node's HTTP parser rejects never become a request; they still get the Error body
 * (src/http/socket-answers.ts answerUnparsableRequest). A client that stopped sending is just disconnected.
 */
function answerUnparsableRequest(error, socket) {
  if (
    error.code === 'ECONNRESET' ||
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ||
    !socket.writable
  ) {
    socket.destroy();
    return;
  }
  endWithError(
    socket,
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large'
      : 'Malformed HTTP request',
  );
}

/** Writes a 400 with the Error body straight to the socket and closes it. */
function endWithError(socket, message) {
  const body = errorBody('VALIDATION_FAILED', message);
  const headers = {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': randomUUID(),
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
}

// ---------------------------------------------------------------------------------------------
// Start and stop

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    closing = true; // responses still in flight close their connection
    setTimeout(() => process.exit(1), 10_000).unref();
    app
      .close()
      .then(() => store.close())
      .then(
        () => {
          logDestination.flushSync(); // the last request lines, before exit drops them
          process.exit(0);
        },
        () => process.exit(1),
      );
  });
}

await app.listen({ port: PORT, host: HOST });
const { port } = app.server.address();
process.stderr.write(`reference listening on http://${HOST}:${port}\n`);
