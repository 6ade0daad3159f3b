import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pets an open order holds: deletePet refuses them with 409 PET_HELD (docs/api-design.md,
 * "The catalogue"). Orders write a row in the transaction that opens one and remove it in the one
 * that closes it, or back this name with a view of their open orders; either way deletePet reads
 * it under the pet's row lock, which opening an order takes too, so the two never interleave.
 */
const POSTGRES = ['CREATE TABLE pet_holds (pet_id bigint PRIMARY KEY)'];

const SQLITE = ['CREATE TABLE pet_holds (pet_id integer PRIMARY KEY)'];

export class PetHolds1796400000000 implements MigrationInterface {
  name = 'PetHolds1796400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = queryRunner.connection.options.type === 'postgres' ? POSTGRES : SQLITE;
    for (const sql of statements) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE pet_holds');
  }
}
