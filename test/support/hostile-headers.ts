import fc from 'fast-check';

/**
 * Header values for the hostile createPet runs: content types that are JSON, that are other media
 * types, that are no media type at all; content codings; Authorization values valid and not.
 */
/** Content types Fastify must hand to the JSON parser: application/json, any case, any parameters. */
export const JSON_CONTENT_TYPES = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'Application/JSON',
  'APPLICATION/JSON; CHARSET=UTF-8',
  'application/json ; charset=utf-8',
  'application/json; charset="utf-8"',
  'application/json; foo=bar',
);

const TOKEN = fc.string({
  unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+.^_`|~-"),
  minLength: 1,
  maxLength: 12,
});

/** Well-formed media types that are not JSON, or only look like it. */
export const OTHER_MEDIA_TYPES = fc.oneof(
  fc.constantFrom(
    'text/plain',
    'text/json',
    'application/jsonp',
    'application/json-patch+json',
    'application/problem+json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'application/*',
    '*/*',
    'application/jsonx',
  ),
  fc
    .tuple(TOKEN, TOKEN)
    .map(([type, subtype]) => `${type}/${subtype}`)
    .filter((type) => type !== 'application/json'),
);

/** Content-Type values that are not media types at all (no `type/subtype`). */
export const NOT_MEDIA_TYPES = fc.oneof(
  fc.constantFrom('', 'json', 'applicationjson', 'application/json, text/plain', 'application/'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).filter((type) => !type.includes('/')),
);

/** Content codings a JSON body might be labelled with; only identity means "as it is". */
export const CONTENT_ENCODINGS = fc.constantFrom(
  'gzip',
  'deflate',
  'br',
  'compress',
  'zstd',
  'x-gzip',
  'gzip, identity',
  'bogus',
);

/**
 * Authorization header values and whether each carries `key` validly: scheme `Bearer` in any case,
 * one space, the key exactly (docs/api-design.md, "API keys").
 */
export function authorizations(key: string): fc.Arbitrary<{ value?: string; valid: boolean }> {
  const prefix = key.slice(0, 'pets_'.length + 12);
  const valid = fc
    .constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR')
    .map((scheme) => ({ value: `${scheme} ${key}`, valid: true }));
  const invalid = fc
    .oneof(
      fc.constantFrom(
        undefined,
        '',
        'Bearer',
        'Bearer ',
        `Bearer  ${key}`,
        `Bearer\t${key}`,
        `Basic ${key}`,
        `Token ${key}`,
        key,
        `Bearer ${key}x`,
        `Bearer ${key.slice(0, -1)}`,
        `Bearer ${key.toUpperCase()}`,
        `Bearer ${prefix}_${'A'.repeat(43)}`,
        `Bearer pets_000000000000_${'A'.repeat(43)}`,
        `Bearer ${key}, Bearer ${key}`,
        `Bearer ${key} ${key}`,
        `Bearer ${'x'.repeat(8000)}`,
        "Bearer ' OR 1=1 --",
        'Bearer pets_%00_x',
      ),
      fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((token) => `Bearer ${token}`),
      fc
        .tuple(fc.nat(key.length - 1), fc.constantFrom('A', 'z', '0', '_', '-'))
        .map(([at, c]) => `Bearer ${key.slice(0, at)}${c}${key.slice(at + 1)}`)
        .filter((value) => value !== `Bearer ${key}`),
    )
    .map((value) => ({ value, valid: false }));
  return fc.oneof({ arbitrary: valid, weight: 1 }, { arbitrary: invalid, weight: 3 });
}
