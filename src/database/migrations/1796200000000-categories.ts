import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Names for the category ids pets already carry (docs/api-design.md, "The catalogue"). The id is
 * the client's, as a pet's categoryId always was. Deleting a category clears its name and keeps
 * the row, so its revision, and with it the ETag, never returns to an earlier value. The UNIQUE
 * constraint is what makes names unique: of concurrent claims of one name, the database lets one
 * commit (NULLs never collide, so unnamed rows do not either).
 */
const POSTGRES = [
  `CREATE TABLE categories (
     id bigint PRIMARY KEY CHECK (id >= 1),
     name text NULL CONSTRAINT categories_name_key UNIQUE,
     revision integer NOT NULL DEFAULT 1
   )`,
];

const SQLITE = [
  `CREATE TABLE categories (
     id integer PRIMARY KEY CHECK (id >= 1),
     name text NULL CONSTRAINT categories_name_key UNIQUE,
     revision integer NOT NULL DEFAULT 1
   )`,
];

export class Categories1796200000000 implements MigrationInterface {
  name = 'Categories1796200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = queryRunner.connection.options.type === 'postgres' ? POSTGRES : SQLITE;
    for (const sql of statements) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE categories');
  }
}
