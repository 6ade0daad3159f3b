import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  apiKeyPrefix,
  generateApiKey,
  hashApiKey,
  hashesEqual,
} from '../../../src/auth/api-key.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('generateApiKey', () => {
  it('makes a key of the form pets_<12 hex>_<43 base64url>', () => {
    expect(generateApiKey().key).toMatch(/^pets_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  });

  it('returns the prefix embedded in the key', () => {
    const { key, prefix } = generateApiKey();
    expect(prefix).toMatch(/^[0-9a-f]{12}$/);
    expect(key.startsWith(`pets_${prefix}_`)).toBe(true);
  });

  it('returns the SHA-256 hex digest of the key as its hash', () => {
    const { key, hash } = generateApiKey();
    expect(hash).toBe(sha256(key));
  });

  it('makes a different key, prefix and hash each time', () => {
    const first = generateApiKey();
    const second = generateApiKey();
    expect(second.key).not.toBe(first.key);
    expect(second.prefix).not.toBe(first.prefix);
    expect(second.hash).not.toBe(first.hash);
  });
});

describe('hashApiKey', () => {
  it('is the SHA-256 hex digest', () => {
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('apiKeyPrefix', () => {
  const secret = 'A'.repeat(40) + '_-z';
  const good = `pets_0123456789ab_${secret}`;

  it('returns the prefix of a well-formed key', () => {
    expect(apiKeyPrefix(good)).toBe('0123456789ab');
  });

  it('accepts a freshly generated key', () => {
    const { key, prefix } = generateApiKey();
    expect(apiKeyPrefix(key)).toBe(prefix);
  });

  it.each([
    ['a wrong prefix word', `keys_0123456789ab_${secret}`],
    ['an uppercase prefix word', `PETS_0123456789ab_${secret}`],
    ['a secret one character short', `pets_0123456789ab_${secret.slice(1)}`],
    ['a secret one character long', `pets_0123456789ab_${secret}A`],
    ['uppercase hex in the prefix', `pets_0123456789AB_${secret}`],
    ['an 11-character prefix', `pets_0123456789a_${secret}`],
    ['a non-base64url character in the secret', `pets_0123456789ab_${secret.slice(1)}+`],
    ['a trailing newline', `${good}\n`],
    ['a leading space', ` ${good}`],
    ['the empty string', ''],
  ])('returns undefined for %s', (_label, key) => {
    expect(apiKeyPrefix(key)).toBeUndefined();
  });
});

describe('hashesEqual', () => {
  const a = sha256('a');
  const b = sha256('b');

  it('is true for the same digest', () => {
    expect(hashesEqual(a, sha256('a'))).toBe(true);
  });

  it('is false for different digests', () => {
    expect(hashesEqual(a, b)).toBe(false);
  });

  it('is false for digests differing only in the last hex digit', () => {
    const other = a.slice(0, -1) + (a.at(-1) === '0' ? '1' : '0');
    expect(hashesEqual(a, other)).toBe(false);
  });

  it.each([
    ['a truncated digest', a.slice(0, 62)],
    ['an empty string', ''],
    ['a 64-character non-hex string', 'z'.repeat(64)],
    ['a digest with a non-hex character inside', `${a.slice(0, 10)}zz${a.slice(12)}`],
    ['the digest followed by junk Node would ignore', `${a}zz`],
    ['the digest with an odd extra hex digit', `${a}a`],
    ['the digest in uppercase', a.toUpperCase()],
  ])('is false when one side is %s', (_label, bad) => {
    expect(hashesEqual(bad, a)).toBe(false);
    expect(hashesEqual(a, bad)).toBe(false);
  });

  it('is false when both sides are the same malformed string', () => {
    expect(hashesEqual('zz', 'zz')).toBe(false);
    expect(hashesEqual('', '')).toBe(false);
  });
});
