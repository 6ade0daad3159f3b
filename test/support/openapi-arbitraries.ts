import fc from 'fast-check';
import { readFileSync } from 'node:fs';

/** The parts of an OpenAPI 3.0 schema object that this API's document uses. */
export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  minProperties?: number;
  items?: Schema;
  /** OpenAPI 3.0: null is a value too. */
  nullable?: boolean;
  description?: string;
}

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

interface Response {
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { schema: Schema }>;
}

export interface Operation {
  operationId: string;
  /** Upper case, as on the wire. */
  method: string;
  /** The path template as a client sends it: the servers' base path included (`/v1/pets/{petId}`). */
  path: string;
  parameters: Parameter[];
  requestBody?: Schema;
  responses: Record<string, Response>;
}

interface RawDocument {
  servers: { url: string }[];
  paths: Record<string, Record<string, RawOperation>>;
  components: { schemas: Record<string, Schema> };
}

interface RawOperation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
}

/**
 * A rule the service applies to free-form strings that the document cannot express
 * (a pet name is not only whitespace and has no U+0000), with strings that break it.
 */
export interface StringRule {
  accepts(value: string): boolean;
  breaking: fc.Arbitrary<string>;
}

/** The committed OpenAPI document, read once; everything the hostile suite generates starts here. */
export class OpenApiDocument {
  private constructor(private readonly raw: RawDocument) {}

  static load(file = 'openapi.json'): OpenApiDocument {
    return new OpenApiDocument(JSON.parse(readFileSync(file, 'utf8')) as RawDocument);
  }

  /** `/v1`: paths in the document are relative to the servers, which all end in it. */
  get basePath(): string {
    return new URL(this.raw.servers[0].url).pathname.replace(/\/$/, '');
  }

  operation(operationId: string): Operation {
    for (const [path, item] of Object.entries(this.raw.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId !== operationId) continue;
        return {
          operationId,
          method: method.toUpperCase(),
          path: this.basePath + path,
          parameters: operation.parameters ?? [],
          requestBody: operation.requestBody?.content['application/json']?.schema,
          responses: operation.responses,
        };
      }
    }
    throw new Error(`no operation ${operationId} in the document`);
  }

  /** Every path template and its methods, as a client addresses them. */
  routes(): { path: string; methods: string[] }[] {
    return Object.entries(this.raw.paths).map(([path, item]) => ({
      path: this.basePath + path,
      methods: Object.keys(item).map((method) => method.toUpperCase()),
    }));
  }

  schema(name: string): Schema {
    return this.resolve({ $ref: `#/components/schemas/${name}` });
  }

  /** Follows `$ref` and merges `allOf`, so callers see one plain schema. */
  resolve(schema: Schema): Schema {
    if (schema.$ref) {
      const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
      const target = name && this.raw.components.schemas[name];
      if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
      return this.resolve(target);
    }
    if (!schema.allOf) return schema;
    const { allOf, ...rest } = schema;
    return Object.assign({}, ...allOf.map((part) => this.resolve(part)), rest) as Schema;
  }

  /** The JSON schema of a response, when the document gives one. */
  responseSchema(operation: Operation, status: number): Schema | undefined {
    const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
    return schema && this.resolve(schema);
  }

  /**
   * Each error code and its HTTP status. The codes are the ErrorCode enum; their statuses are
   * listed in its description as "- `CODE` (400): …", which is the only place the document says them.
   */
  errorStatuses(): Map<string, number> {
    const errorCode = this.schema('ErrorCode');
    const statuses = new Map<string, number>();
    for (const code of errorCode.enum as string[]) {
      const status = new RegExp(`\`${code}\` \\((\\d{3})\\)`).exec(errorCode.description ?? '');
      if (!status) throw new Error(`the document gives no status for error code ${code}`);
      statuses.set(code, Number(status[1]));
    }
    return statuses;
  }
}

// ---------------------------------------------------------------------------------------------
// Values that satisfy a schema

const MIN_SAFE = Number.MIN_SAFE_INTEGER;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Integers in [min, max], the bounds themselves often: off-by-one bugs live there. */
function integerIn(min: number, max: number): fc.Arbitrary<number> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(min, max), weight: 1 },
    { arbitrary: fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number), weight: 4 },
  );
}

/** Code points of a string: what JSON Schema's minLength/maxLength count. */
function codePointLength(value: string): number {
  let length = 0;
  for (const _ of value) length++;
  return length;
}

/** Strings of any Unicode (emoji, combining marks, controls), short ones and ones at full length. */
function unicodeString(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const sized = (unit: 'binary' | 'grapheme' | 'grapheme-ascii', size: fc.SizeForArbitrary) =>
    fc.string({ unit, minLength, maxLength, size });
  return fc
    .oneof(
      sized('grapheme-ascii', 'small'),
      sized('grapheme', 'small'),
      sized('binary', 'small'),
      sized('binary', 'max'),
      sized('grapheme', 'max'),
    )
    .filter((value) => {
      const length = codePointLength(value);
      return length >= minLength && length <= maxLength;
    });
}

/** Values valid under `schema` (and `stringRule` for free-form strings). */
export function validValue(
  doc: OpenApiDocument,
  schema: Schema,
  stringRule?: StringRule,
): fc.Arbitrary<unknown> {
  const s = doc.resolve(schema);
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'integer':
      return integerIn(s.minimum ?? MIN_SAFE, s.maximum ?? MAX_SAFE);
    case 'number':
      return fc.double({ min: s.minimum, max: s.maximum, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string': {
      const pattern = s.pattern === undefined ? undefined : new RegExp(s.pattern, 'u');
      return unicodeString(s.minLength ?? 0, s.maxLength ?? 64).filter(
        (value) => (pattern?.test(value) ?? true) && (stringRule?.accepts(value) ?? true),
      );
    }
    case 'array':
      return fc.array(validValue(doc, s.items ?? {}, stringRule), { maxLength: 5 });
    case 'object': {
      const properties = Object.fromEntries(
        Object.entries(s.properties ?? {}).map(([name, property]) => [
          name,
          validValue(doc, property, stringRule),
        ]),
      );
      const minProperties = s.minProperties ?? 0;
      return fc
        .record(properties, { requiredKeys: s.required ?? [] })
        .filter((object) => Object.keys(object).length >= minProperties);
    }
    default:
      return fc.jsonValue();
  }
}

// ---------------------------------------------------------------------------------------------
// Values that break a schema

/** Keys a JSON object can carry that mean something to JavaScript (prototype pollution, shadowing). */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isPrototypeOf',
];

/** Field names nobody declared: random ones, prototype keys, an empty name, near misses. */
export function unknownFieldName(known: string[]): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.constantFrom(
        ...PROTOTYPE_KEYS,
        '',
        'id',
        ' name',
        'Name',
        'NAME',
        'status ',
        'x'.repeat(300),
      ),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
    )
    .filter((name) => !known.includes(name));
}

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** Any JSON value whose type is not `type` (an integer is also a number, as in JSON Schema). */
function wrongType(type: Schema['type']): fc.Arbitrary<unknown> {
  return fc
    .oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ maxLength: 10 }),
      fc.constantFrom('1', '', 'true', 'null', '9007199254740991'),
      fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    )
    .filter((value) => {
      const actual = jsonType(value);
      return !(actual === type || (type === 'number' && actual === 'integer'));
    });
}

/** Values that break `schema`: of another type, out of range, too long, not in the enum. */
export function invalidValue(
  doc: OpenApiDocument,
  schema: Schema,
  stringRule?: StringRule,
): fc.Arbitrary<unknown> {
  const s = doc.resolve(schema);
  if (s.enum) {
    const members = s.enum;
    const strings = members.filter((member): member is string => typeof member === 'string');
    return fc.oneof(
      wrongType(s.type),
      fc.string({ maxLength: 12 }).filter((value) => !members.includes(value)),
      fc.constantFrom(...strings.flatMap((m) => [m.toUpperCase(), ` ${m}`, `${m}\u0000`, m + m])),
    );
  }
  switch (s.type) {
    case 'integer':
      return fc.oneof(wrongType('integer'), outOfRange(s), fractionIn(s));
    case 'string':
      return fc.oneof(
        wrongType('string'),
        ...(s.maxLength === undefined ? [] : [tooLong(s.maxLength)]),
        ...((s.minLength ?? 0) > 0 ? [fc.constant('')] : []),
        ...(stringRule ? [stringRule.breaking] : []),
      );
    case 'object':
      return fc.oneof(wrongType('object'), invalidObject(doc, s, stringRule));
    default:
      return wrongType(s.type);
  }
}

function outOfRange(s: Schema): fc.Arbitrary<number> {
  const min = s.minimum ?? MIN_SAFE;
  const max = s.maximum ?? MAX_SAFE;
  return fc.oneof(
    fc.constantFrom(min - 1, max + 1, -max, 1e21, 1e308, -1e308, Number.MAX_VALUE),
    fc.bigInt({ min: BigInt(max) + 1n, max: BigInt(max) * 1000n }).map(Number),
    fc.bigInt({ min: BigInt(min) - 1000n, max: BigInt(min) - 1n }).map(Number),
  );
}

/** Numbers inside the range that are not integers. */
function fractionIn(s: Schema): fc.Arbitrary<number> {
  const min = Math.max(s.minimum ?? -1e6, -1e6);
  const max = Math.min(s.maximum ?? 1e6, 1e6);
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true })
    .filter((value) => !Number.isInteger(value));
}

/** Strings a little or a lot over `maxLength` code points, in ASCII and in astral characters. */
function tooLong(maxLength: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: 1, max: 2 * maxLength }), fc.constantFrom('x', 'é', '🐕', ' '))
    .map(([extra, unit]) => unit.repeat(maxLength + extra));
}

/** An object that breaks its schema in one or more ways: a bad field, a missing one, an extra one. */
function invalidObject(
  doc: OpenApiDocument,
  s: Schema,
  stringRule?: StringRule,
): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.keys(s.properties ?? {});
  const valid = validValue(doc, s, stringRule) as fc.Arbitrary<Record<string, unknown>>;
  const withBadField = fc
    .constantFrom(...properties)
    .chain((name) =>
      fc
        .tuple(valid, invalidValue(doc, s.properties![name], stringRule))
        .map(([object, bad]) => ({ ...object, [name]: bad })),
    );
  const withoutRequired = s.required?.length
    ? [
        fc
          .tuple(valid, fc.subarray(s.required, { minLength: 1 }))
          .map(([object, missing]) =>
            Object.fromEntries(Object.entries(object).filter(([key]) => !missing.includes(key))),
          ),
      ]
    : [];
  const withUnknown = fc
    .tuple(valid, unknownFieldName(properties), fc.jsonValue({ maxDepth: 2 }))
    .map(([object, name, value]) => defineOwn(object, name, value));
  const tooFew = s.minProperties ? [fc.constant({})] : [];
  return fc.oneof(withBadField, ...withoutRequired, withUnknown, ...tooFew);
}

/** Adds an own property, even `__proto__`, the way JSON.parse would. */
function defineOwn(
  object: Record<string, unknown>,
  name: string,
  value: unknown,
): Record<string, unknown> {
  return Object.fromEntries([...Object.entries(object), [name, value]]);
}

// ---------------------------------------------------------------------------------------------
// Checking values against a schema (the oracle)

/**
 * Top-level fields of `value` that break `schema`, or `['']` when `value` is not even of the
 * schema's type. Objects are closed: the README (not the document) says unknown fields are
 * rejected by name.
 */
export function violations(
  doc: OpenApiDocument,
  schema: Schema,
  value: unknown,
  stringRule?: StringRule,
): string[] {
  const s = doc.resolve(schema);
  if (s.type !== 'object') return conforms(doc, s, value, stringRule) ? [] : [''];
  if (jsonType(value) !== 'object') return [''];
  const object = value as Record<string, unknown>;
  const properties = s.properties ?? {};
  const unknown = Object.keys(object).filter((key) => !Object.hasOwn(properties, key));
  const missing = (s.required ?? []).filter((name) => !Object.hasOwn(object, name));
  const broken = Object.keys(properties).filter(
    (name) =>
      Object.hasOwn(object, name) && !conforms(doc, properties[name], object[name], stringRule),
  );
  // Too few members is the body's fault as a whole, named by no field.
  const tooFew = Object.keys(object).length < (s.minProperties ?? 0) ? [''] : [];
  return [...unknown, ...missing, ...broken, ...tooFew];
}

export function conforms(
  doc: OpenApiDocument,
  schema: Schema,
  value: unknown,
  stringRule?: StringRule,
): boolean {
  const s = doc.resolve(schema);
  if (s.nullable && value === null) return true;
  if (s.enum && !s.enum.includes(value)) return false;
  switch (s.type) {
    case 'integer':
    case 'number':
      return (
        typeof value === 'number' &&
        (s.type === 'number' || Number.isInteger(value)) &&
        value >= (s.minimum ?? -Infinity) &&
        value <= (s.maximum ?? Infinity)
      );
    case 'string': {
      if (typeof value !== 'string') return false;
      const length = codePointLength(value);
      return (
        length >= (s.minLength ?? 0) &&
        length <= (s.maxLength ?? Infinity) &&
        (s.pattern === undefined || new RegExp(s.pattern, 'u').test(value)) &&
        (stringRule?.accepts(value) ?? true)
      );
    }
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return (
        Array.isArray(value) &&
        value.every((item) => conforms(doc, s.items ?? {}, item, stringRule))
      );
    case 'object':
      return violations(doc, s, value, stringRule).length === 0;
    default:
      return s.enum !== undefined || s.type === undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters (query string, path)

/**
 * A parameter value as it appears in a URL (OpenAPI style `form` / `simple`): an integer in plain
 * decimal, a string as it is.
 */
export function serializeParameter(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Reads a parameter value back: integers only in canonical decimal (no sign, leading zero,
 * exponent or fraction), strings as they are.
 */
export function parameterConforms(
  doc: OpenApiDocument,
  schema: Schema,
  text: string,
  stringRule?: StringRule,
): boolean {
  const s = doc.resolve(schema);
  if (s.type !== 'integer') return conforms(doc, s, text, stringRule);
  return /^(0|-?[1-9]\d*)$/.test(text) && conforms(doc, s, Number(text));
}

/** Texts for a parameter that do not serialize a valid value of `schema`. */
export function invalidParameterText(doc: OpenApiDocument, schema: Schema): fc.Arbitrary<string> {
  const s = doc.resolve(schema);
  const unconstrained =
    s.type === 'string' &&
    !s.enum &&
    s.pattern === undefined &&
    !s.minLength &&
    s.maxLength === undefined;
  if (unconstrained) throw new Error('every text is a valid value of an unconstrained string');
  const integerForms =
    s.type === 'integer'
      ? [
          invalidValue(doc, s).map((value) =>
            typeof value === 'number' ? String(value) : serializeParameter(value),
          ),
          validValue(doc, s)
            .map(serializeParameter)
            .chain((text) =>
              fc.constantFrom(`0${text}`, `+${text}`, `${text}.0`, `${text}e0`, ` ${text}`),
            ),
          fc.constantFrom('', '-0', '0x1', '1_0', 'NaN', 'Infinity', '١', '1'.repeat(40)),
        ]
      : [];
  return fc
    .oneof(fc.string({ maxLength: 12 }), ...integerForms)
    .filter((text) => !parameterConforms(doc, s, text));
}
