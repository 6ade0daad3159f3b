import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { SqlRunner, type Statement } from '../database/sql-runner.js';
import { MAX_REMEMBERED_KEYS } from './api-key.js';
import { ApiKeyRows } from './api-key-rows.js';

/** At most one write per key per minute per instance, for each of the two columns. */
const RECORD_RESOLUTION_MS = 60_000;

type UsageColumn = 'lastUsedAt' | 'lastDeprecatedCallAt';

/**
 * When a key was last used and last called a deprecated operation, for `apikey list`: at most one
 * write per key per minute on this instance, never awaited, so no request waits on it. A failed
 * write is logged; the next minute's catches up.
 */
@Injectable()
export class ApiKeyUsage {
  private readonly logger = new Logger('ApiKeys');
  /** By column, then by key id: when this instance last wrote it. */
  private readonly recordedAt: Record<UsageColumn, LRUCache<number, number>> = {
    lastUsedAt: new LRUCache({ max: MAX_REMEMBERED_KEYS }),
    lastDeprecatedCallAt: new LRUCache({ max: MAX_REMEMBERED_KEYS }),
  };

  private readonly rows: ApiKeyRows;
  /** By column: the UPDATE that writes it. */
  private readonly updates: Record<UsageColumn, Statement<{ id: number; at: unknown }>>;

  constructor(private readonly db: SqlRunner) {
    this.rows = new ApiKeyRows(db);
    this.updates = {
      lastUsedAt: db.statement('UPDATE api_keys SET last_used_at = :at WHERE id = :id'),
      lastDeprecatedCallAt: db.statement(
        'UPDATE api_keys SET last_deprecated_call_at = :at WHERE id = :id',
      ),
    };
  }

  /** The key with this id was just accepted. */
  recordUse(id: number, now = Date.now()): void {
    this.record('lastUsedAt', id, now);
  }

  /** The key with this id just called a deprecated operation. */
  recordDeprecatedCall(id: number): void {
    this.record('lastDeprecatedCallAt', id, Date.now());
  }

  private record(column: UsageColumn, id: number, now: number): void {
    const last = this.recordedAt[column].get(id);
    if (last !== undefined && now - last < RECORD_RESOLUTION_MS) return;
    this.recordedAt[column].set(id, now);
    const at = this.rows.toParameters({ [column]: new Date(now) })[column];
    const { text, values } = this.updates[column];
    this.db.write(text, values({ id, at })).catch((error: unknown) => {
      this.logger.warn(`${column} of key ${id} not recorded: ${(error as Error).message}`);
    });
  }
}
