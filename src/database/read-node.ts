import type { DataSource, EntityManager } from 'typeorm';
import { isReadNodeFailure } from './database-errors.js';

/**
 * Runs a read on the read node (DATABASE_READ_URL) when there is one, else on the primary. A read
 * node failure is asked again of the primary (docs/deployment.md); the query's own errors are not.
 * `work` gets the manager of a query runner of its own (`manager.queryRunner` is set).
 */
export async function onReadNode<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  onFallback: () => void = () => {},
): Promise<T> {
  if (!hasReadNode(dataSource)) return withQueryRunner(dataSource, 'master', work);
  try {
    return await withQueryRunner(dataSource, 'slave', work);
  } catch (error) {
    if (!isReadNodeFailure(error)) throw error;
    onFallback();
    return withQueryRunner(dataSource, 'master', work);
  }
}

export function hasReadNode(dataSource: DataSource): boolean {
  return dataSource.options.type === 'postgres' && !!dataSource.options.replication;
}

async function withQueryRunner<T>(
  dataSource: DataSource,
  mode: 'master' | 'slave',
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner(mode);
  try {
    return await work(runner.manager);
  } finally {
    await runner.release();
  }
}
