import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The first home of Idempotency-Key claims: four columns on `pets`. Kept as it ran, because
 * migrations replay in order on every database; IdempotencyKeysTable1795400000000 moves the claims
 * into a table of their own and drops these columns.
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
