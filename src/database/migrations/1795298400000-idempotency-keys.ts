import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A pet remembers the Idempotency-Key that created it (api-decisions §10). Keeping the key on the
 * pet row makes "create once" a single INSERT whose unique index decides every race, on both
 * engines, with no transaction spanning two tables. The index is partial, so pets created without
 * a key cost nothing extra.
 */
const COLUMNS = (bigint: string) => [
  `ALTER TABLE pets ADD COLUMN idempotency_api_key_id ${bigint} NULL`,
  `ALTER TABLE pets ADD COLUMN idempotency_key text NULL`,
  `ALTER TABLE pets ADD COLUMN idempotency_request_hash text NULL`,
  `ALTER TABLE pets ADD COLUMN idempotency_expires_at ${bigint} NULL`,
];

const INDEXES = [
  `CREATE UNIQUE INDEX pets_idempotency_key_idx ON pets (idempotency_api_key_id, idempotency_key)
     WHERE idempotency_key IS NOT NULL`,
  `CREATE INDEX pets_idempotency_expiry_idx ON pets (idempotency_expires_at)
     WHERE idempotency_key IS NOT NULL`,
];

export class IdempotencyKeys1795298400000 implements MigrationInterface {
  name = 'IdempotencyKeys1795298400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const bigint = queryRunner.connection.options.type === 'postgres' ? 'bigint' : 'integer';
    for (const sql of [...COLUMNS(bigint), ...INDEXES]) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX pets_idempotency_expiry_idx');
    await queryRunner.query('DROP INDEX pets_idempotency_key_idx');
    for (const column of ['expires_at', 'request_hash', 'key', 'api_key_id']) {
      await queryRunner.query(`ALTER TABLE pets DROP COLUMN idempotency_${column}`);
    }
  }
}
