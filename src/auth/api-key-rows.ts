import type { DataSource, Driver } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import type { Row, SqlRunner } from '../database/sql-runner.js';
import { ApiKeyEntity } from './api-key.entity.js';

/**
 * `api_keys` values converted by TypeORM's driver, with ApiKeyEntity's column metadata, as its
 * repository converted them: so rows written before and after read alike. On SQLite a date is UTC
 * text ('2026-11-26 10:00:00.123'; `datetime('now')` gives no milliseconds); on PostgreSQL,
 * timestamptz.
 */
export class ApiKeyRows {
  /** Every column of ApiKeyEntity, for a SELECT or a RETURNING clause. */
  readonly columns: string;
  private readonly driver: Driver;
  private readonly metadata: readonly ColumnMetadata[];

  constructor(db: SqlRunner) {
    this.driver = db.driver;
    // Every TypeORM driver holds its DataSource, though the Driver interface does not declare it.
    const { dataSource } = db.driver as Driver & { dataSource: DataSource };
    this.metadata = dataSource.getMetadata(ApiKeyEntity).columns;
    this.columns = this.metadata.map((column) => column.databaseName).join(', ');
  }

  /** A row selected with `columns`, as the key TypeORM would have read. */
  toEntity(row: Row): ApiKeyEntity {
    const key: Partial<Record<keyof ApiKeyEntity, unknown>> = {};
    for (const column of this.metadata) {
      const property = column.propertyName as keyof ApiKeyEntity;
      key[property] = this.driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return key as ApiKeyEntity;
  }

  /** `fields` as TypeORM would have written them: a statement's parameters, by property name. */
  toParameters<F extends Partial<ApiKeyEntity>>(fields: F): Record<keyof F, unknown> {
    const parameters = {} as Record<keyof F, unknown>;
    for (const property of Object.keys(fields) as (keyof F & keyof ApiKeyEntity)[]) {
      const column = this.metadata.find(({ propertyName }) => propertyName === property)!;
      const value: unknown = this.driver.preparePersistentValue(fields[property], column);
      parameters[property] = value;
    }
    return parameters;
  }
}
