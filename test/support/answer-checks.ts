import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { conforms, type OpenApiDocument, type Operation } from './openapi-arbitraries.js';

/** What the suite needs of a response, whether it came from Fastify inject or a raw socket. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** What the checks need to know about the request that produced an answer. */
export interface SentRequest {
  method: string;
  /** The operation the request addressed, when it addressed one by its documented path and method. */
  operation?: Operation;
  /** Names the client chose (body fields, query parameters), which an error message may repeat. */
  echoable?: string[];
}

/**
 * Things no response may contain: an error tells the client what it got wrong, never how the
 * service is built (docs/api-design.md, "Errors").
 */
const LEAKS: [string, RegExp][] = [
  ['a stack trace', /\n\s+at |\bat (?:async )?[\w$.<>]+ \(|[\w-]+\.(?:ts|js|mjs|cjs):\d+/],
  [
    'SQL or a database name',
    // Statement shapes, not the words alone: "delete" is also an HTTP method the document names.
    /\bSELECT\b[^]{0,300}?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+"?\w+"?\s+SET\b|\bDELETE\s+FROM\b|SQLITE_|sqlite|postgres|syntax error|QueryFailed|relation "/i,
  ],
  [
    'a framework name',
    /fastify|typeorm|class-validator|class-transformer|passport|find-my-way|light-my-request|node_modules|\bFST_|\bERR_[A-Z_]+|exception\b/i,
  ],
  // Case-sensitive: "nest" is an ordinary word in our own messages.
  ['a framework name', /@nestjs|\bNest(?:JS|Factory|Application)?\b/],
];

/**
 * The checks every answer must pass, whatever was sent: no 5xx, the hygiene headers, errors as
 * the documented Error body with a code from the document's enum, success bodies as documented,
 * and nothing leaked: no stack, SQL, framework name, nor the API key (or its stored hash).
 */
export class AnswerChecks {
  private readonly errorStatuses: Map<string, number>;
  private readonly secrets: string[];

  constructor(
    private readonly doc: OpenApiDocument,
    apiKey: string,
  ) {
    this.errorStatuses = doc.errorStatuses();
    this.secrets = [
      apiKey,
      // The secret part alone, after the public prefix (it may itself contain "_").
      apiKey.slice(apiKey.indexOf('_', 'pets_'.length) + 1),
      createHash('sha256').update(apiKey).digest('hex'),
    ];
  }

  check(request: SentRequest, answer: Answer): void {
    const context = `${request.method} answered ${answer.status}: ${answer.body.slice(0, 300)}`;
    expect(answer.status, context).toBeLessThan(500);
    // A listPets or getPet 200 (or its 304) has an ETag, and it may be kept by a client cache that
    // revalidates it; an answer that carries one pet after a write (createPet 201, updatePet 200)
    // has the pet's ETag too, but is not cached; everything else is no-store (docs/api-design.md,
    // "Conditional requests", "The pet lifecycle").
    const etag = answer.headers.etag;
    if (etag !== undefined) {
      expect([200, 201, 304], context).toContain(answer.status);
      // A SHA-1 in base64url (src/http/conditional-get.ts) or a pet's id and revision
      // (src/pets/pet-entity-tag.ts), and nothing else.
      expect(etag, context).toMatch(/^(?:W\/"[\w-]{27}"|"\d+-\d+")$/);
    }
    const cacheable = etag !== undefined && ['GET', 'HEAD'].includes(request.method);
    expect(answer.headers['cache-control'], context).toBe(
      cacheable ? 'private, no-cache' : 'no-store',
    );
    if (answer.status === 304) expect(answer.body, context).toBe('');
    expect(answer.headers['x-content-type-options'], context).toBe('nosniff');
    expect(answer.headers['x-request-id'], context).toMatch(/^[\w.:-]{1,128}$/);
    expect(answer.headers['x-powered-by'], context).toBeUndefined();
    if (request.operation) {
      expect(Object.keys(request.operation.responses), `${context}: undocumented status`).toContain(
        String(answer.status),
      );
    }
    if (answer.status >= 400) this.checkError(request, answer, context);
    else if (request.operation && request.method !== 'HEAD' && answer.status !== 304)
      this.checkSuccess(request.operation, answer, context);
    this.checkNothingLeaks(request, answer, context);
  }

  private checkError(request: SentRequest, answer: Answer, context: string): void {
    expect(answer.headers['content-type'], context).toBe('application/json; charset=utf-8');
    if (answer.status === 401)
      expect(answer.headers['www-authenticate'], context).toBe('Bearer realm="animal-store"');
    if (answer.status === 405) expect(answer.headers.allow, context).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
    if (request.method === 'HEAD' && answer.body === '') return;
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    expect(Object.keys(body).sort(), context).toEqual(['code', 'message', 'status']);
    expect(body.status, context).toBe(answer.status);
    expect(this.errorStatuses.get(body.code as string), `${context}: code not in the enum`).toBe(
      answer.status,
    );
    expect(body.message, context).toEqual(expect.stringMatching(/\S/));
  }

  private checkSuccess(operation: Operation, answer: Answer, context: string): void {
    if (answer.status === 204) {
      // No content: no body, and nothing to type.
      expect(answer.body, context).toBe('');
      expect(answer.headers['content-type'], context).toBeUndefined();
      return;
    }
    expect(answer.headers['content-type'], context).toBe('application/json; charset=utf-8');
    const schema = this.doc.responseSchema(operation, answer.status);
    expect(schema, `${context}: no documented body`).toBeDefined();
    expect(conforms(this.doc, schema!, JSON.parse(answer.body)), context).toBe(true);
  }

  private checkNothingLeaks(request: SentRequest, answer: Answer, context: string): void {
    const headerText = Object.entries(answer.headers)
      // The ETag is a hash, checked above to be nothing else; any short run of letters turns up
      // in one now and then (a `W/"fsT_…"` matched the FST_ pattern).
      .filter(([name]) => name !== 'etag')
      .map(([name, value]) => `${name}: ${String(value)}`)
      .join('\n');
    const text = `${headerText}\n${answer.body}`;
    for (const secret of this.secrets)
      expect(text.includes(secret), `${context}: leaks a key`).toBe(false);
    // What the client itself named may come back in a message; only the rest is judged.
    let ours = text;
    for (const name of request.echoable ?? []) if (name) ours = ours.split(name).join('');
    for (const [what, pattern] of LEAKS)
      expect(ours, `${context}: leaks ${what}`).not.toMatch(pattern);
  }
}

/**
 * A 400 must name every offending field (README, Errors), recognisably: a name that is empty or
 * has surrounding whitespace would vanish in the sentence, so it must appear as a JSON string.
 */
export function expectNamesFields(message: string, fields: string[]): void {
  for (const field of fields) {
    const plain = field !== '' && field.trim() === field;
    const named = message.includes(JSON.stringify(field)) || (plain && message.includes(field));
    expect(named, `${JSON.stringify(message)} should name the field ${JSON.stringify(field)}`).toBe(
      true,
    );
  }
}
