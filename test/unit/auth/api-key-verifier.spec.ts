import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyEntity } from '../../../src/auth/api-key.entity.js';
import type { ApiKeyLookup } from '../../../src/auth/api-key-lookup.js';
import type { ApiKeyUsage } from '../../../src/auth/api-key-usage.js';
import { ApiKeyVerifier } from '../../../src/auth/api-key-verifier.js';
import { generateApiKey } from '../../../src/auth/api-key.js';
import { RecentlyVerifiedKeys } from '../../../src/auth/recently-verified-keys.js';
import { Metrics } from '../../../src/metrics/metrics.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

const { key, prefix, hash } = generateApiKey();

const storedKey = (fields: Partial<ApiKeyEntity> = {}): ApiKeyEntity => ({
  id: 7,
  name: 'storefront',
  prefix,
  keyHash: hash,
  scopes: 'pets:read',
  createdAt: new Date(NOW - 86_400_000),
  expiresAt: null,
  lastUsedAt: null,
  lastDeprecatedCallAt: null,
  revokedAt: null,
  ...fields,
});

const PRINCIPAL = { id: 7, name: 'storefront', prefix, scopes: ['pets:read'], expiresAt: null };

/** A verifier over a lookup that answers `stored` until the test changes it. */
function verifierFinding(stored: ApiKeyEntity | null) {
  const byPrefix = vi.fn((_prefix: string) => Promise.resolve(stored));
  const byIds = vi.fn((ids: readonly number[]) =>
    Promise.resolve(stored && ids.includes(stored.id) ? [stored] : []),
  );
  const recordUse = vi.fn();
  const recentKeys = new RecentlyVerifiedKeys();
  const metrics = new Metrics();
  const verifier = new ApiKeyVerifier(
    { byPrefix, byIds } as unknown as ApiKeyLookup,
    { recordUse } as unknown as ApiKeyUsage,
    recentKeys,
    metrics,
  );
  const refusals = async () =>
    Object.fromEntries(
      (await metrics.authFailures.get()).values.map(({ labels, value }) => [labels.reason, value]),
    );
  return { verifier, byPrefix, byIds, recordUse, recentKeys, refusals };
}

describe('ApiKeyVerifier', () => {
  it('accepts a stored, active key: its owner, a recorded use, a recently verified key', async () => {
    const { verifier, byPrefix, recordUse, recentKeys, refusals } = verifierFinding(storedKey());
    expect(await verifier.verify(key)).toEqual(PRINCIPAL);
    expect(byPrefix).toHaveBeenCalledWith(prefix);
    expect(recordUse).toHaveBeenCalledWith(7, NOW);
    expect(recentKeys.includes(hash)).toBe(true);
    expect(await refusals()).toEqual({});
  });

  it('takes the hash the caller computed instead of hashing the key again', async () => {
    const { verifier } = verifierFinding(storedKey());
    expect(await verifier.verify(key, hash)).toEqual(PRINCIPAL);
    expect(await verifier.verify(key, 'c'.repeat(64))).toBeUndefined();
  });

  it('trusts a verified key for 2 seconds, then asks the database again', async () => {
    const { verifier, byPrefix, recordUse } = verifierFinding(storedKey());
    await verifier.verify(key);
    vi.advanceTimersByTime(1_999);
    expect(await verifier.verify(key)).toEqual(PRINCIPAL);
    expect(byPrefix).toHaveBeenCalledTimes(1);
    expect(recordUse).toHaveBeenLastCalledWith(7, NOW + 1_999);

    vi.advanceTimersByTime(1);
    expect(await verifier.verify(key)).toEqual(PRINCIPAL);
    expect(byPrefix).toHaveBeenCalledTimes(2);
  });

  it('trusts a cached key no longer than its expiry', async () => {
    const { verifier, byPrefix, refusals } = verifierFinding(
      storedKey({ expiresAt: new Date(NOW + 1_000) }),
    );
    expect(await verifier.verify(key)).toEqual({ ...PRINCIPAL, expiresAt: new Date(NOW + 1_000) });
    vi.advanceTimersByTime(1_000);
    expect(await verifier.verify(key)).toBeUndefined();
    expect(byPrefix).toHaveBeenCalledTimes(2);
    expect(await refusals()).toEqual({ expired: 1 });
  });

  it('refuses a malformed key without a lookup', async () => {
    const { verifier, byPrefix, recordUse, refusals } = verifierFinding(storedKey());
    expect(await verifier.verify(`${key}x`)).toBeUndefined();
    expect(byPrefix).not.toHaveBeenCalled();
    expect(recordUse).not.toHaveBeenCalled();
    expect(await refusals()).toEqual({ malformed: 1 });
  });

  it.each([
    ['no stored key has its prefix', null],
    ['the stored key with its prefix has another hash', storedKey({ keyHash: 'b'.repeat(64) })],
  ])('refuses an unknown key: %s', async (_label, stored) => {
    const { verifier, recordUse, recentKeys, refusals } = verifierFinding(stored);
    expect(await verifier.verify(key)).toBeUndefined();
    expect(recordUse).not.toHaveBeenCalled();
    expect(recentKeys.includes(hash)).toBe(false);
    expect(await refusals()).toEqual({ unknown: 1 });
  });

  it('refuses a revoked key', async () => {
    const { verifier, refusals } = verifierFinding(storedKey({ revokedAt: new Date(NOW - 1) }));
    expect(await verifier.verify(key)).toBeUndefined();
    expect(await refusals()).toEqual({ revoked: 1 });
  });

  it.each([
    ['expired before now', NOW - 1],
    ['expiring this very millisecond', NOW],
  ])('refuses a key %s', async (_label, expiresAt) => {
    const { verifier, refusals } = verifierFinding(storedKey({ expiresAt: new Date(expiresAt) }));
    expect(await verifier.verify(key)).toBeUndefined();
    expect(await refusals()).toEqual({ expired: 1 });
  });

  it('accepts a key expiring after now', async () => {
    const { verifier } = verifierFinding(storedKey({ expiresAt: new Date(NOW + 1) }));
    expect(await verifier.verify(key)).toEqual({ ...PRINCIPAL, expiresAt: new Date(NOW + 1) });
  });

  it('forgets a key it refuses: it is no longer a recently verified key', async () => {
    const stored = storedKey();
    const { verifier, recentKeys } = verifierFinding(stored);
    await verifier.verify(key);
    stored.revokedAt = new Date(NOW);
    vi.advanceTimersByTime(2_000);
    expect(await verifier.verify(key)).toBeUndefined();
    expect(recentKeys.includes(hash)).toBe(false);
  });

  describe('recheck, for responses that stay open', () => {
    it('answers the owner of each key still valid, by id, as the database has it now', async () => {
      const stored = storedKey({ expiresAt: new Date(NOW + 60_000) });
      const { verifier, byIds } = verifierFinding(stored);
      stored.scopes = 'pets:read,pets:write';
      expect(await verifier.recheck([7, 8])).toEqual(
        new Map([
          [
            7,
            {
              ...PRINCIPAL,
              scopes: ['pets:read', 'pets:write'],
              expiresAt: new Date(NOW + 60_000),
            },
          ],
        ]),
      );
      expect(byIds).toHaveBeenCalledExactlyOnceWith([7, 8]);
    });

    it.each([
      ['revoked', { revokedAt: new Date(NOW - 1) }],
      ['expired', { expiresAt: new Date(NOW) }],
    ])('leaves out a key %s', async (_label, fields) => {
      const { verifier, refusals } = verifierFinding(storedKey(fields));
      expect(await verifier.recheck([7])).toEqual(new Map());
      // Not a presented key: no authentication failed.
      expect(await refusals()).toEqual({});
    });

    it('makes a trusted key that it finds revoked be looked up again, and no longer recent', async () => {
      const stored = storedKey();
      const { verifier, byPrefix, recentKeys } = verifierFinding(stored);
      await verifier.verify(key);
      stored.revokedAt = new Date(NOW);
      await verifier.recheck([7]);
      expect(recentKeys.includes(hash)).toBe(false);
      expect(await verifier.verify(key)).toBeUndefined();
      expect(byPrefix).toHaveBeenCalledTimes(2);
    });

    it('gives a trusted key that is still valid its owner as it is now, without a lookup', async () => {
      const stored = storedKey();
      const { verifier, byPrefix } = verifierFinding(stored);
      await verifier.verify(key);
      stored.scopes = 'pets:write';
      await verifier.recheck([7]);
      expect(await verifier.verify(key)).toEqual({ ...PRINCIPAL, scopes: ['pets:write'] });
      expect(byPrefix).toHaveBeenCalledTimes(1);
    });

    it('leaves the other trusted keys as they are', async () => {
      const stored = storedKey();
      const { verifier, byPrefix } = verifierFinding(stored);
      await verifier.verify(key);
      stored.revokedAt = new Date(NOW);
      await verifier.recheck([8]);
      expect(await verifier.verify(key)).toEqual(PRINCIPAL);
      expect(byPrefix).toHaveBeenCalledTimes(1);
    });
  });

  it('refuses without counting when no metrics are kept', async () => {
    const verifier = new ApiKeyVerifier(
      { byPrefix: () => Promise.resolve(null) } as unknown as ApiKeyLookup,
      { recordUse: vi.fn() } as unknown as ApiKeyUsage,
      new RecentlyVerifiedKeys(),
    );
    expect(await verifier.verify(key)).toBeUndefined();
  });
});
