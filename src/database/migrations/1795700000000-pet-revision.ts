import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A counter each change of a pet increments: its strong ETag, which If-Match on updatePet compares
 * (docs/api-design.md, "The pet lifecycle"). Existing pets start at 1, as new ones do.
 */
export class PetRevision1795700000000 implements MigrationInterface {
  name = 'PetRevision1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE pets ADD COLUMN revision integer NOT NULL DEFAULT 1');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE pets DROP COLUMN revision');
  }
}
