import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * listPets' `categoryId` filter, alone and with `status`, pages by id like the unfiltered list:
 * each index hands out one category's pets (of one status) in id order from the cursor on, so a
 * page costs the same at any depth (docs/api-design.md, "The catalogue").
 */
const UP = [
  'CREATE INDEX pets_category_id_id_idx ON pets (category_id, id)',
  'CREATE INDEX pets_category_id_status_id_idx ON pets (category_id, status, id)',
];

export class PetsByCategory1796300000000 implements MigrationInterface {
  name = 'PetsByCategory1796300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const sql of UP) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX pets_category_id_status_id_idx');
    await queryRunner.query('DROP INDEX pets_category_id_id_idx');
  }
}
