import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, PageCursor } from '../../../src/http/page-cursor.js';
import { RequestValidationPipe } from '../../../src/http/request-validation.pipe.js';
import { ApiError } from '../../../src/errors/api-error.js';

const base64url = (text: string) => Buffer.from(text).toString('base64url');

describe('encodeCursor / decodeCursor', () => {
  it.each([1, 42, Number.MAX_SAFE_INTEGER])('round-trips id %d', (id) => {
    expect(decodeCursor(encodeCursor(id))).toBe(id);
  });

  it('produces only base64url characters', () => {
    expect(encodeCursor(Number.MAX_SAFE_INTEGER)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('rejects the empty string', () => {
    expect(decodeCursor('')).toBeUndefined();
  });

  it.each(['YWZ0ZXI6MQ!', 'YWZ0ZXI6MQ+', 'YWZ0ZXI6M/', 'YWZ0 ZXI6MQ', 'YWZ0ZXI6MQ\n'])(
    'rejects non-base64url characters in %j',
    (cursor) => {
      expect(decodeCursor(cursor)).toBeUndefined();
    },
  );

  it.each([
    'after:0',
    'after:01',
    'after:-1',
    'after:1.5',
    'after:+1',
    'after:9007199254740992',
    'before:1',
    'after:',
    'after:1 ',
    'AFTER:1',
  ])('rejects the encoding of %j', (text) => {
    expect(decodeCursor(base64url(text))).toBeUndefined();
  });

  it('rejects the canonical encoding with "=" padding appended', () => {
    const cursor = encodeCursor(1);
    expect(cursor.length % 4).not.toBe(0);
    expect(decodeCursor(`${cursor}==`)).toBeUndefined();
  });

  it('rejects a non-canonical encoding that decodes to the same bytes (unused trailing bits set)', () => {
    const cursor = encodeCursor(1); // 'after:1' is 7 bytes: the last character carries 4 unused bits
    const last = cursor.at(-1)!;
    const sibling = cursor.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) + 1);
    expect(Buffer.from(sibling, 'base64url').toString()).toBe('after:1');
    expect(decodeCursor(sibling)).toBeUndefined();
  });

  it('rejects strings longer than 32 characters, even when they decode to a valid prefix', () => {
    expect(decodeCursor(encodeCursor(1) + 'A'.repeat(23))).toBeUndefined();
    expect(decodeCursor('A'.repeat(33))).toBeUndefined();
    expect(decodeCursor('A'.repeat(10_000))).toBeUndefined();
  });
});

class PageQuery {
  @PageCursor()
  cursor?: number;
}

/** The query as the validation pipe hands it to a controller, or the message of its 400. */
function piped(query: Record<string, unknown>): PageQuery | string {
  try {
    return new RequestValidationPipe().transform(query, {
      type: 'query',
      metatype: PageQuery,
    }) as PageQuery;
  } catch (error) {
    if (error instanceof ApiError) return error.body.message;
    throw error;
  }
}

describe('PageCursor', () => {
  it('hands the handler the id a cursor stands for, decoded once by the pipe', () => {
    expect(piped({ cursor: encodeCursor(4096) })).toEqual(
      Object.assign(new PageQuery(), { cursor: 4096 }),
    );
  });

  it('leaves an absent cursor absent', () => {
    expect(piped({})).toEqual(new PageQuery());
  });

  it.each([
    ['garbage!', 'cursor must be a cursor taken from a Link rel="next" header'],
    [base64url('after:0'), 'cursor must be a cursor taken from a Link rel="next" header'],
    ['', 'cursor must be a cursor taken from a Link rel="next" header'],
    [[encodeCursor(1), encodeCursor(2)], 'cursor must be given at most once'],
  ])('refuses %j: %s', (cursor, message) => {
    expect(piped({ cursor })).toBe(message);
  });
});
