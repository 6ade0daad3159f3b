import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, type TransformFnParams } from 'class-transformer';
import { IsOptional, ValidateBy } from 'class-validator';
import { parseCanonicalDecimal } from './canonical-decimal.js';
import { expecting } from './field-messages.js';

const PREFIX = 'after:';
/** encodeCursor makes at most 30 base64url characters; anything else is refused undecoded. */
const BASE64URL_CURSOR = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Keyset cursor: the id of the last pet on the previous page, wrapped so clients treat it as
 * opaque. Only the exact encoding this module produces is accepted.
 */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`${PREFIX}${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  if (!BASE64URL_CURSOR.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  if (!text.startsWith(PREFIX)) return undefined;
  const lastId = parseCanonicalDecimal(text.slice(PREFIX.length));
  if (lastId === undefined) return undefined;
  return encodeCursor(lastId) === cursor ? lastId : undefined;
}

const CURSOR = expecting('cursor', 'a cursor taken from a Link rel="next" header', 'query');

/** A cursor as the id it stands for; anything else stays as it came, for the validator to refuse. */
function decodedCursor({ value }: TransformFnParams): unknown {
  if (typeof value !== 'string') return value;
  return decodeCursor(value) ?? value;
}

/**
 * The `cursor` query parameter of a keyset-paged list (docs/api-design.md, "Paging"). The pipe
 * decodes it once, so the DTO holds the id the page starts after; on the wire it is a string.
 */
export const PageCursor = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      description:
        'Opaque position in the list. Do not build it: follow the `Link: <…>; rel="next"` header of the previous page.',
    }),
    IsOptional(),
    Transform(decodedCursor),
    ValidateBy(
      { name: 'isPageCursor', validator: { validate: (v) => typeof v === 'number' } },
      CURSOR,
    ),
  );
