import { hashApiKey } from './api-key.js';

/** The scheme in any case, one space, the token (RFC 6750, section 2.1). */
const BEARER = /^Bearer (\S+)$/i;

/**
 * A request's bearer token with its SHA-256 (hashed once: the address limit and the key check
 * both look keys up by it), or why it has none: no Authorization header, or another form.
 */
export type BearerToken = { token: string; hash: string } | { refusal: 'missing' | 'malformed' };

/** Reads the one place a key may travel: the Authorization header (docs/api-design.md, "API keys"). */
export function bearerTokenOf(authorization: string | undefined): BearerToken {
  if (authorization === undefined) return { refusal: 'missing' };
  const token = BEARER.exec(authorization)?.[1];
  return token === undefined ? { refusal: 'malformed' } : { token, hash: hashApiKey(token) };
}
