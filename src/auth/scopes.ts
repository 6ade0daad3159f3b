/**
 * What an API key may do (docs/api-design.md, "API keys"): each operation needs one scope, and a
 * key carries a set of them. A storefront that only shows animals gets a `pets:read` key; a till
 * that sells them, `orders:write` as well.
 */
export const SCOPES = ['pets:read', 'pets:write', 'orders:write', 'webhooks:manage'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a key gets when its creator names no scopes (keys from before scopes keep the
 * `pets:read,pets:write` their migration stored, and no more). Not
 * `webhooks:manage`: a webhook sends every change to a URL of the caller's choosing, so only a
 * key created for that gets it.
 */
export const DEFAULT_SCOPES: readonly Scope[] = ['pets:read', 'pets:write', 'orders:write'];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * A comma-separated scope list (`pets:read,pets:write`), as the CLI takes it and the database
 * stores it. Throws a RangeError naming the problem: an empty list, an unknown scope, a repeat.
 */
export function parseScopes(text: string): Scope[] {
  return normalizeScopes(text.split(','));
}

/** The scopes named, checked, in the order of SCOPES; throws a RangeError like parseScopes. */
export function normalizeScopes(names: readonly string[]): Scope[] {
  if (names.length === 0) throw new RangeError('a key needs at least one scope');
  const scopes: Scope[] = [];
  for (const name of names) {
    if (!isScope(name)) {
      throw new RangeError(
        `unknown scope ${JSON.stringify(name)}: scopes are ${SCOPES.join(', ')}, comma-separated`,
      );
    }
    if (scopes.includes(name)) throw new RangeError(`scope ${name} is listed twice`);
    scopes.push(name);
  }
  // In the order of SCOPES, so equal sets are stored and shown alike.
  return SCOPES.filter((scope) => scopes.includes(scope));
}

export function formatScopes(scopes: readonly Scope[]): string {
  return scopes.join(',');
}
