import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency claims move from four columns on `pets` into a table of their own, existing claims
 * included. Expiry becomes a timestamp (it was epoch milliseconds); SQLite stores it as ISO 8601
 * text, the form the repository binds, so comparisons stay correct as plain text comparisons.
 */
const POSTGRES = [
  `CREATE TABLE idempotency_keys (
     api_key_id integer NOT NULL REFERENCES api_keys (id),
     key text NOT NULL,
     request_hash text NOT NULL,
     pet_id bigint NOT NULL REFERENCES pets (id),
     expires_at timestamptz NOT NULL,
     PRIMARY KEY (api_key_id, key)
   )`,
  `INSERT INTO idempotency_keys (api_key_id, key, request_hash, pet_id, expires_at)
   SELECT idempotency_api_key_id, idempotency_key, idempotency_request_hash, id,
          to_timestamp(idempotency_expires_at / 1000.0)
   FROM pets WHERE idempotency_key IS NOT NULL`,
];

const SQLITE = [
  `CREATE TABLE idempotency_keys (
     api_key_id integer NOT NULL REFERENCES api_keys (id),
     key text NOT NULL,
     request_hash text NOT NULL,
     pet_id integer NOT NULL REFERENCES pets (id),
     expires_at datetime NOT NULL,
     PRIMARY KEY (api_key_id, key)
   )`,
  `INSERT INTO idempotency_keys (api_key_id, key, request_hash, pet_id, expires_at)
   SELECT idempotency_api_key_id, idempotency_key, idempotency_request_hash, id,
          strftime('%Y-%m-%dT%H:%M:%fZ', idempotency_expires_at / 1000.0, 'unixepoch')
   FROM pets WHERE idempotency_key IS NOT NULL`,
];

const COMMON = [
  // The sweep deletes by expiry.
  `CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`,
  `DROP INDEX pets_idempotency_expiry_idx`,
  `DROP INDEX pets_idempotency_key_idx`,
  ...['api_key_id', 'key', 'request_hash', 'expires_at'].map(
    (column) => `ALTER TABLE pets DROP COLUMN idempotency_${column}`,
  ),
];

export class IdempotencyKeysTable1795400000000 implements MigrationInterface {
  name = 'IdempotencyKeysTable1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const engine = queryRunner.connection.options.type === 'postgres' ? POSTGRES : SQLITE;
    for (const sql of [...engine, ...COMMON]) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const isPostgres = queryRunner.connection.options.type === 'postgres';
    const bigint = isPostgres ? 'bigint' : 'integer';
    for (const [column, type] of [
      ['api_key_id', bigint],
      ['key', 'text'],
      ['request_hash', 'text'],
      ['expires_at', bigint],
    ]) {
      await queryRunner.query(`ALTER TABLE pets ADD COLUMN idempotency_${column} ${type} NULL`);
    }
    const expiresAtMs = isPostgres
      ? `(extract(epoch FROM k.expires_at) * 1000)::bigint`
      : `CAST((julianday(k.expires_at) - 2440587.5) * 86400000 AS integer)`;
    await queryRunner.query(
      `UPDATE pets SET idempotency_api_key_id = k.api_key_id, idempotency_key = k.key,
         idempotency_request_hash = k.request_hash, idempotency_expires_at = ${expiresAtMs}
       FROM idempotency_keys k WHERE k.pet_id = pets.id`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX pets_idempotency_key_idx ON pets (idempotency_api_key_id, idempotency_key)
         WHERE idempotency_key IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX pets_idempotency_expiry_idx ON pets (idempotency_expires_at)
         WHERE idempotency_key IS NOT NULL`,
    );
    await queryRunner.query('DROP TABLE idempotency_keys');
  }
}
