import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { MAX_JSON_DEPTH } from '../../src/http/request-body.js';
import {
  invalidValue,
  PROTOTYPE_KEYS,
  validValue,
  violations,
  type OpenApiDocument,
  type Schema,
  type StringRule,
} from './openapi-arbitraries.js';

/**
 * createPet bodies for the hostile-input suites: valid pets written every way JSON allows, hostile
 * bodies (wrong values, wrong text, wrong bytes), and the oracle that says what createPet must
 * answer for any body.
 */

/**
 * What the service asks of a pet name beyond the document's 1 to 255 characters: not only
 * whitespace, and storable exactly as sent on both engines, so no U+0000 (PostgreSQL text cannot
 * hold it) and no unpaired surrogate (not Unicode text at all). See docs/api-design.md,
 * "Validation".
 */
export const PET_NAME_RULE: StringRule = {
  accepts: (value) => value.trim() !== '' && !value.includes('\u0000') && value.isWellFormed(),
  breaking: fc.oneof(
    fc
      .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff'), {
        minLength: 1,
        maxLength: 8,
      })
      .map((spaces) => spaces.join('')),
    fc.constantFrom('Re\u0000x', '\u0000', 'Rex\ud800', '\udc00', 'a\ud83d'),
  ),
};

// ---------------------------------------------------------------------------------------------
// JSON text, written the many ways a client may legally write it

export interface JsonStyle {
  indent: number | string | undefined;
  escapeNonAscii: boolean;
  padding: string;
}

export const jsonStyle: fc.Arbitrary<JsonStyle> = fc.record({
  indent: fc.constantFrom(undefined, undefined, 1, 2, '\t'),
  escapeNonAscii: fc.boolean(),
  padding: fc.constantFrom('', '', ' ', '\n', '\r\n', '\t '),
});

export function writeJson(value: unknown, style: JsonStyle): string {
  let text = JSON.stringify(value, null, style.indent) ?? '';
  // Non-ASCII only ever occurs inside strings, where a \u escape of each UTF-16 unit means the same.
  if (style.escapeNonAscii)
    text = text.replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  return style.padding + text + style.padding;
}

/** An object with its keys in a random order (order carries no meaning in JSON). */
export function shuffledKeys(
  object: Record<string, unknown>,
): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(object);
  // Object.fromEntries defines own properties, `__proto__` included, as JSON.parse does.
  return fc
    .shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length })
    .map((order) => Object.fromEntries(order.map((key) => [key, object[key]])));
}

// ---------------------------------------------------------------------------------------------
// Hostile request bodies: structurally wrong values, then wrong text, then wrong bytes

interface HostileBody {
  kind: string;
  bytes: Buffer;
}

/** Byte sequences that are not UTF-8: stray continuation bytes, overlongs, surrogates, 5-byte forms. */
export const BAD_UTF8: number[][] = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc3],
  [0xc0, 0xaf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

/** JSON number texts at and past what a double or an int64 can carry, and non-JSON number forms. */
const NUMBER_TEXTS = fc.oneof(
  fc.constantFrom(
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '18446744073709551616',
    '1e400',
    '-1e400',
    '1e-400',
    '-0',
    '1.0',
    '1e2',
    '1E+2',
    '0.1e1',
    '00',
    '01',
    '.5',
    '1.',
    '+1',
    '0x10',
    'Infinity',
    'NaN',
    '1_000',
  ),
  fc.integer({ min: 17, max: 400 }).map((digits) => `1${'0'.repeat(digits)}`),
);

function nested(depth: number, open: string, close: string, leaf: string): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

/** Deep arrays or objects, both under and far over the service's nesting limit. */
const DEEP_VALUE = fc
  .tuple(fc.integer({ min: 1, max: 4000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? nested(depth, '[', ']', '1') : nested(depth, '{"a":', '}', '1'),
  );

/** Replaces the value text of `field` in a JSON object text, or adds the field when absent. */
function withFieldText(text: string, field: string, valueText: string): string {
  const object = text.trim();
  const body = object.slice(1, -1).trim();
  return `{${JSON.stringify(field)}:${valueText}${body ? `,${body}` : ''}}`;
}

/** Inserts `bytes` at a position inside the first string literal (or anywhere when none). */
function insertBytes(text: string, bytes: readonly number[], at: number): Buffer {
  const raw = Buffer.from(text);
  const quote = raw.indexOf(0x22);
  const position =
    quote >= 0 && at % 2 === 0 ? quote + 1 : Math.min(Math.floor(at / 2), raw.length);
  return Buffer.concat([raw.subarray(0, position), Buffer.from(bytes), raw.subarray(position)]);
}

/**
 * Bodies for createPet that a client should never get a 201 for, except where the mutation
 * happens to keep the body valid (a duplicate key whose last value is fine, say): the oracle
 * decides from the bytes, not from the kind.
 */
export function hostileBody(
  doc: OpenApiDocument,
  newPet: Schema,
  stringRule: StringRule,
  bodyLimit: number,
): fc.Arbitrary<HostileBody> {
  const validText = fc
    .tuple(validValue(doc, newPet, stringRule), jsonStyle)
    .map(([value, style]) => writeJson(value, style));
  const fields = Object.keys(doc.resolve(newPet).properties ?? {});
  const anyField = fc.oneof(
    fc.constantFrom(...fields),
    fc.constantFrom(...PROTOTYPE_KEYS),
    fc.string({ maxLength: 6 }),
  );
  const text = (kind: string, arbitrary: fc.Arbitrary<string>) =>
    arbitrary.map((body) => ({ kind, bytes: Buffer.from(body) }));

  return fc.oneof(
    text(
      'invalid value',
      fc
        .tuple(invalidValue(doc, newPet, stringRule), jsonStyle)
        .map(([value, style]) => writeJson(value, style)),
    ),
    text(
      'duplicate key',
      fc
        .tuple(validText, anyField, fc.jsonValue({ maxDepth: 1 }))
        .map(([body, field, value]) => withFieldText(body, field, JSON.stringify(value))),
    ),
    text(
      'prototype key',
      fc
        .tuple(validText, fc.constantFrom(...PROTOTYPE_KEYS), fc.jsonValue({ maxDepth: 2 }))
        .map(([body, key, value]) => withFieldText(body, key, JSON.stringify(value))),
    ),
    text(
      'deep nesting',
      fc
        .tuple(validText, anyField, DEEP_VALUE)
        .map(([body, field, deep]) => withFieldText(body, field, deep)),
    ),
    text(
      'deep body',
      fc.integer({ min: 2, max: 5000 }).map((depth) => nested(depth, '{"name":', '}', '"x"')),
    ),
    text(
      'huge number',
      fc
        .tuple(validText, NUMBER_TEXTS)
        .map(([body, number]) => withFieldText(body, 'categoryId', number)),
    ),
    text(
      'long string',
      fc
        .tuple(
          validText,
          fc.constantFrom(...fields, 'x'),
          fc.integer({ min: 200, max: bodyLimit * 2 }),
          fc.constantFrom('x', 'é', '🐕', '\\u0041', '\\"'),
        )
        .map(([body, field, length, unit]) =>
          withFieldText(body, field, `"${unit.repeat(Math.ceil(length / unit.length))}"`),
        ),
    ),
    fc
      .tuple(validText, fc.constantFrom(...BAD_UTF8), fc.nat())
      .map(([body, bytes, at]) => ({ kind: 'bad UTF-8', bytes: insertBytes(body, bytes, at) })),
    fc.tuple(validText, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([body, at, byte]) => {
      const bytes = Buffer.from(body);
      bytes[at % bytes.length] = byte;
      return { kind: 'byte flipped', bytes };
    }),
    text(
      'truncated',
      fc.tuple(validText, fc.nat()).map(([body, at]) => body.slice(0, at % body.length)),
    ),
    text(
      'not JSON',
      fc.oneof(
        fc.constantFrom(
          '',
          ' ',
          '{',
          '}',
          '{}',
          '[]',
          'null',
          '\ufeff{"name":"Rex","categoryId":1}',
          "{'name':'Rex','categoryId':1}",
          '{name:"Rex",categoryId:1}',
          '{"name":"Rex","categoryId":1,}',
          '{"name":"Rex","categoryId":1}x',
          '{"name":"Rex","categoryId":1}{}',
          '{"name":"Rex" /* c */,"categoryId":1}',
          'name=Rex&categoryId=1',
          '{"name":"Rex\u0001","categoryId":1}',
        ),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
    ),
  );
}

/** What createPet must answer for these body bytes, sent as JSON with a valid key. */
export type CreateOutcome =
  | { status: 201; pet: Record<string, unknown> }
  | { status: 400; code: 'MALFORMED_JSON' | 'VALIDATION_FAILED'; offending: string[] }
  | { status: 413 };

/**
 * The fields a 400 for a parsed createPet body must name, as a function for `expectedCreate`: the
 * NewPet violations, or [''] for a body nested too deep, which is refused as a whole.
 */
export function petProblems(doc: OpenApiDocument, newPet: Schema): (value: unknown) => string[] {
  return (value) => {
    if (nestingDepth(value) > MAX_JSON_DEPTH) return [''];
    return violations(doc, newPet, value, PET_NAME_RULE);
  };
}

function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0 && deepest <= MAX_JSON_DEPTH) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The keys of a body that is a JSON object: names the client chose, which a 400 may repeat. */
export function topLevelKeys(bytes: Buffer): string[] {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null ? Object.keys(value) : [];
  } catch {
    return [];
  }
}

/**
 * The oracle for a createPet body: JSON text must be UTF-8 and parse; the value must satisfy
 * NewPet (closed) and the name rule. `offending` are the fields a 400 must name.
 */
export function expectedCreate(
  bytes: Buffer,
  bodyLimit: number,
  problemsOf: (value: unknown) => string[],
): CreateOutcome {
  if (bytes.length > bodyLimit) return { status: 413 };
  if (bytes.length === 0) return { status: 400, code: 'VALIDATION_FAILED', offending: [] };
  if (!isUtf8(bytes)) return { status: 400, code: 'MALFORMED_JSON', offending: [] };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { status: 400, code: 'MALFORMED_JSON', offending: [] };
  }
  const problems = problemsOf(value);
  if (problems.length > 0)
    return { status: 400, code: 'VALIDATION_FAILED', offending: problems.filter(Boolean) };
  return { status: 201, pet: value as Record<string, unknown> };
}
