// The SQLite side of the reference: the service's own tables (src/database/migrations), opened as
// the service opens them (WAL, 5 s busy timeout), every statement prepared once at start.
import Database from 'better-sqlite3';
import { createHash, timingSafeEqual } from 'node:crypto';

/** How long a verified key is trusted without asking the database again (VERIFIED_KEY_TTL_MS in src/auth/api-keys.service.ts). */
const VERIFIED_KEY_TTL_MS = 2_000;
const MAX_VERIFIED_KEYS = 10_000;

/** Key format `pets_<12 hex prefix>_<43 base64url>` (src/auth/api-key.ts). */
const KEY_PATTERN = /^pets_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function openStore(path) {
  // fileMustExist: the service has migrated and seeded this file; the reference creates nothing.
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  db.pragma('journal_mode = WAL');

  // raw(): rows as arrays, so no object per row is built only to be taken apart again.
  const pageAll = db
    .prepare('SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?')
    .raw();
  const pageByStatus = db
    .prepare(
      'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?',
    )
    .raw();
  const byId = db.prepare('SELECT id, name, category_id, status FROM pets WHERE id = ?').raw();
  const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)');
  const keyByPrefix = db.prepare('SELECT key_hash, revoked_at FROM api_keys WHERE prefix = ?');
  const ping = db.prepare('SELECT 1').pluck();

  /** Verified keys by SHA-256 (never the key in the clear) → when the trust ends. */
  const verified = new Map();

  return {
    /** Up to `take` rows [id, name, category_id, status] after `afterId`, ascending. */
    page: (afterId, status, take) =>
      status === undefined ? pageAll.all(afterId, take) : pageByStatus.all(status, afterId, take),
    byId: (id) => byId.get(id),
    /** Stores a pet and returns its id. */
    insert: (name, categoryId, status) =>
      Number(insert.run(name, categoryId, status).lastInsertRowid),
    ping: () => ping.get(),
    close: () => db.close(),

    /** True when `key` is a known, unrevoked key (ApiKeysService.authenticate). */
    authenticate(key) {
      const match = KEY_PATTERN.exec(key);
      if (match === null) return false;
      const hash = createHash('sha256').update(key).digest('hex');
      const trustedUntil = verified.get(hash);
      if (trustedUntil !== undefined && trustedUntil > Date.now()) return true;
      const stored = keyByPrefix.get(match[1]);
      if (
        stored === undefined ||
        stored.revoked_at !== null ||
        !hashesEqual(stored.key_hash, hash)
      ) {
        verified.delete(hash);
        return false;
      }
      if (verified.size >= MAX_VERIFIED_KEYS) verified.delete(verified.keys().next().value);
      verified.set(hash, Date.now() + VERIFIED_KEY_TTL_MS);
      return true;
    },
  };
}

/** Constant-time comparison of two hex SHA-256 digests; false for anything that is not one. */
function hashesEqual(a, b) {
  if (!SHA256_HEX.test(a) || !SHA256_HEX.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** SQLite errors that mean "cannot serve now" rather than a bug (database-errors.ts). */
export function isDatabaseUnavailable(error) {
  return error?.code === 'SQLITE_BUSY' || error?.code === 'SQLITE_LOCKED';
}
