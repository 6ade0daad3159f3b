import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { onReadNode } from '../database/read-node.js';
import { ApiKeyEntity } from './api-key.entity.js';

/**
 * Finds a stored key by its prefix, on the read node like pet reads, so that a crashed primary
 * does not refuse every client whose key is not cached (docs/deployment.md).
 */
@Injectable()
export class ApiKeyLookup {
  /**
   * Lookups in flight, by prefix. When a trusted key's 2 seconds run out, every request then in
   * flight with it misses the cache at once; they share one query instead of each running its
   * own TypeORM lookup back to back (docs/performance.md).
   */
  private readonly inFlight = new Map<string, Promise<ApiKeyEntity | null>>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  byPrefix(prefix: string): Promise<ApiKeyEntity | null> {
    let lookup = this.inFlight.get(prefix);
    if (!lookup) {
      lookup = onReadNode(this.dataSource, (manager) =>
        manager.findOneBy(ApiKeyEntity, { prefix }),
      ).finally(() => this.inFlight.delete(prefix));
      this.inFlight.set(prefix, lookup);
    }
    return lookup;
  }

  /**
   * The stored keys with these ids (those that still exist), on the read node like byPrefix. One
   * parameter per id: callers pass the keys of open streams, far fewer than either engine's limit.
   */
  byIds(ids: readonly number[]): Promise<ApiKeyEntity[]> {
    return onReadNode(this.dataSource, (manager) => manager.findBy(ApiKeyEntity, { id: In(ids) }));
  }
}
