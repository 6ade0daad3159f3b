import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each claim keeps the first response to its createPet, so a retry gets that answer and not the
 * pet as later changes left it (docs/api-design.md, "Idempotency"). Existing claims take it from
 * their pet's pet.created event, which holds the pet exactly as the 201 sent it, with the ETag of
 * revision 1; a claim whose event is gone keeps NULLs, and its retry answers with the pet as it is.
 */
const UP = [
  'ALTER TABLE idempotency_keys ADD COLUMN response_body text NULL',
  'ALTER TABLE idempotency_keys ADD COLUMN response_etag text NULL',
  // A join, not a lookup per claim: pet_events has no index on pet_id.
  `UPDATE idempotency_keys
   SET response_body = e.pet, response_etag = '"' || idempotency_keys.pet_id || '-1"'
   FROM pet_events e
   WHERE e.pet_id = idempotency_keys.pet_id AND e.type = 'pet.created'`,
];

export class IdempotencyResponses1796100000000 implements MigrationInterface {
  name = 'IdempotencyResponses1796100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const sql of UP) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE idempotency_keys DROP COLUMN response_etag');
    await queryRunner.query('ALTER TABLE idempotency_keys DROP COLUMN response_body');
  }
}
