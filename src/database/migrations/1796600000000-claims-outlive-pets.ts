import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key claim outlives the pet it created: deletePet removes the pet, and a retry of
 * the create still gets the first answer, which the claim stores (docs/api-design.md,
 * "Idempotency"). So `pet_id` no longer references `pets`. SQLite cannot drop a constraint: the
 * table is rebuilt, as it is, without it.
 */
const POSTGRES_UP = ['ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pet_id_fkey'];

const POSTGRES_DOWN = [
  `ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pet_id_fkey
   FOREIGN KEY (pet_id) REFERENCES pets (id)`,
];

const COLUMNS = 'api_key_id, key, request_hash, pet_id, expires_at, response_body, response_etag';

function sqliteRebuild(petId: string): string[] {
  return [
    `CREATE TABLE idempotency_keys_rebuilt (
       api_key_id integer NOT NULL REFERENCES api_keys (id),
       key text NOT NULL,
       request_hash text NOT NULL,
       ${petId},
       expires_at datetime NOT NULL,
       response_body text NULL,
       response_etag text NULL,
       PRIMARY KEY (api_key_id, key)
     )`,
    `INSERT INTO idempotency_keys_rebuilt (${COLUMNS}) SELECT ${COLUMNS} FROM idempotency_keys`,
    'DROP TABLE idempotency_keys',
    'ALTER TABLE idempotency_keys_rebuilt RENAME TO idempotency_keys',
    'CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)',
  ];
}

export class ClaimsOutlivePets1796600000000 implements MigrationInterface {
  name = 'ClaimsOutlivePets1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const steps = postgres ? POSTGRES_UP : sqliteRebuild('pet_id integer NOT NULL');
    for (const sql of steps) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const steps = postgres
      ? POSTGRES_DOWN
      : sqliteRebuild('pet_id integer NOT NULL REFERENCES pets (id)');
    for (const sql of steps) await queryRunner.query(sql);
  }
}
