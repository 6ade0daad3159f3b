// The reference's key check, shared by both stores: the service's ApiKeyVerifier.verify, with
// its short trust of a key it has just verified (src/auth/api-key-verifier.ts).
import { hash as digest, timingSafeEqual } from 'node:crypto';

/** How long a verified key is trusted without asking the database again (VERIFIED_KEY_TTL_MS in src/auth/api-key-verifier.ts). */
const VERIFIED_KEY_TTL_MS = 2_000;
const MAX_VERIFIED_KEYS = 10_000;

/** Key format `pets_<12 hex prefix>_<43 base64url>` (src/auth/api-key.ts). */
const KEY_PATTERN = /^pets_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * @param lookup the stored `{ key_hash, revoked_at, scopes }` of a prefix, or undefined; or a
 *   promise of it
 * @returns `authenticate(key)`: the key's scopes (an array, as src/auth/scopes.ts parseScopes
 *   gives them) when `key` is a known, unrevoked key, else false; a promise of that only when the
 *   database had to be asked and answers asynchronously
 */
export function createVerifiedKeys(lookup) {
  /** Verified keys by SHA-256 (never the key in the clear) → `{ until, scopes }`: when the trust ends. */
  const verified = new Map();

  function verify(hash, stored) {
    if (stored === undefined || stored.revoked_at !== null || !hashesEqual(stored.key_hash, hash)) {
      verified.delete(hash);
      return false;
    }
    if (verified.size >= MAX_VERIFIED_KEYS) verified.delete(verified.keys().next().value);
    const scopes = stored.scopes.split(',');
    verified.set(hash, { until: Date.now() + VERIFIED_KEY_TTL_MS, scopes });
    return scopes;
  }

  return {
    authenticate(key) {
      const match = KEY_PATTERN.exec(key);
      if (match === null) return false;
      const hash = digest('sha256', key, 'hex');
      const trusted = verified.get(hash);
      if (trusted !== undefined && trusted.until > Date.now()) return trusted.scopes;
      const stored = lookup(match[1]);
      return stored instanceof Promise
        ? stored.then((row) => verify(hash, row))
        : verify(hash, stored);
    },
  };
}

/** Constant-time comparison of two hex SHA-256 digests; false for anything that is not one. */
function hashesEqual(a, b) {
  if (!SHA256_HEX.test(a) || !SHA256_HEX.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
