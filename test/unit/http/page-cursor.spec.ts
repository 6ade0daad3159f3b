import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../../src/http/page-cursor.js';

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
