import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key format: `pets_<prefix>_<secret>`. The prefix (12 hex chars) is public and indexed so a key
 * can be found without comparing hashes across rows; the secret is 32 random bytes (base64url).
 */
const KEY_PATTERN = /^pets_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

/** The most keys each in-memory map of an instance holds: bounds what a flood of keys costs it. */
export const MAX_REMEMBERED_KEYS = 10_000;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = randomBytes(6).toString('hex');
  const key = `pets_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: hashApiKey(key) };
}

/** The public prefix of a well-formed key, or undefined for anything else. */
export function apiKeyPrefix(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

/** SHA-256, hex: keys are 256-bit random, so a fast unsalted hash is enough (no guessing to slow down). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Constant-time comparison of two hex SHA-256 digests; false for anything that is not one. */
export function hashesEqual(a: string, b: string): boolean {
  if (!SHA256_HEX.test(a) || !SHA256_HEX.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
