import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders hold pets themselves: deletePet and updatePet ask for the pet's open order (migration
 * "orders", src/orders/pet-holds.ts), so the `pet_holds` table of migration "pet-holds", which
 * nothing writes, goes.
 */
export class DropPetHolds1797100000000 implements MigrationInterface {
  name = 'DropPetHolds1797100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE pet_holds');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const petId = queryRunner.connection.options.type === 'postgres' ? 'bigint' : 'integer';
    await queryRunner.query(`CREATE TABLE pet_holds (pet_id ${petId} PRIMARY KEY)`);
  }
}
