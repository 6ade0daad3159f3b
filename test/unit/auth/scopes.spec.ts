import { describe, expect, it } from 'vitest';
import { formatScopes, normalizeScopes, parseScopes } from '../../../src/auth/scopes.js';

describe('parseScopes', () => {
  it.each([
    ['pets:read', ['pets:read']],
    ['pets:write', ['pets:write']],
    ['pets:read,pets:write', ['pets:read', 'pets:write']],
    ['pets:write,pets:read', ['pets:read', 'pets:write']],
    ['webhooks:manage', ['webhooks:manage']],
    ['webhooks:manage,pets:read', ['pets:read', 'webhooks:manage']],
  ])('parses %j', (text, scopes) => {
    expect(parseScopes(text)).toEqual(scopes);
  });

  it.each([
    [
      '',
      'unknown scope "": scopes are pets:read, pets:write, orders:write, webhooks:manage, comma-separated',
    ],
    [
      'pets:admin',
      'unknown scope "pets:admin": scopes are pets:read, pets:write, orders:write, webhooks:manage, comma-separated',
    ],
    [
      'pets:read, pets:write',
      'unknown scope " pets:write": scopes are pets:read, pets:write, orders:write, webhooks:manage, comma-separated',
    ],
    [
      'pets:read,',
      'unknown scope "": scopes are pets:read, pets:write, orders:write, webhooks:manage, comma-separated',
    ],
    [
      'PETS:READ',
      'unknown scope "PETS:READ": scopes are pets:read, pets:write, orders:write, webhooks:manage, comma-separated',
    ],
    ['pets:read,pets:read', 'scope pets:read is listed twice'],
  ])('refuses %j', (text, message) => {
    expect(() => parseScopes(text)).toThrow(new RangeError(message));
  });

  it('round-trips through formatScopes', () => {
    expect(formatScopes(parseScopes('pets:write,pets:read'))).toBe('pets:read,pets:write');
  });
});

describe('normalizeScopes', () => {
  it('refuses an empty set: a key that can do nothing is a mistake', () => {
    expect(() => normalizeScopes([])).toThrow(new RangeError('a key needs at least one scope'));
  });
});
