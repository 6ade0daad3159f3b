import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * getInventory's counts, kept by the database in the transaction of every change of `pets`
 * (docs/api-design.md, "Counting"). A change appends its +1/-1 per (category, status) to
 * `pet_count_changes`, with category 0 standing for every category; appending takes no lock
 * another change waits on, as updating one counter row would. A fold adds the changes into
 * `pet_counts` every second (src/inventory/inventory-fold.ts), and a count reads both, so it is
 * exact whenever it is read. Triggers, so that every writer of `pets` is counted, and the pets'
 * own statements stay as they are. `status` is 'none' for a pet without one.
 */
const POSTGRES = [
  // Writers wait while the existing pets are counted, so none is counted twice or missed.
  'LOCK TABLE pets IN SHARE MODE',
  `CREATE TABLE pet_counts (
     category_id bigint NOT NULL,
     status text NOT NULL,
     n bigint NOT NULL,
     PRIMARY KEY (category_id, status)
   )`,
  `CREATE TABLE pet_count_changes (
     category_id bigint NOT NULL,
     status text NOT NULL,
     n bigint NOT NULL
   )`,
  // One statement's rows at once (transition tables): a create of many pets appends a few rows.
  `CREATE FUNCTION count_pet_changes() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO pet_count_changes (category_id, status, n)
       SELECT k.category_id, k.status, sum(k.n) FROM new_pets p CROSS JOIN LATERAL
         (VALUES (p.category_id, coalesce(p.status, 'none'), 1), (0, coalesce(p.status, 'none'), 1))
         AS k (category_id, status, n)
       GROUP BY k.category_id, k.status;
     ELSIF TG_OP = 'DELETE' THEN
       INSERT INTO pet_count_changes (category_id, status, n)
       SELECT k.category_id, k.status, sum(k.n) FROM old_pets p CROSS JOIN LATERAL
         (VALUES (p.category_id, coalesce(p.status, 'none'), -1), (0, coalesce(p.status, 'none'), -1))
         AS k (category_id, status, n)
       GROUP BY k.category_id, k.status;
     ELSE
       INSERT INTO pet_count_changes (category_id, status, n)
       SELECT k.category_id, k.status, sum(k.n) FROM (
         SELECT category_id, status, 1 AS n FROM new_pets
         UNION ALL SELECT category_id, status, -1 FROM old_pets
       ) p CROSS JOIN LATERAL
         (VALUES (p.category_id, coalesce(p.status, 'none'), p.n), (0, coalesce(p.status, 'none'), p.n))
         AS k (category_id, status, n)
       GROUP BY k.category_id, k.status HAVING sum(k.n) <> 0;
     END IF;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER pets_counted_insert AFTER INSERT ON pets REFERENCING NEW TABLE AS new_pets
   FOR EACH STATEMENT EXECUTE FUNCTION count_pet_changes()`,
  `CREATE TRIGGER pets_counted_update AFTER UPDATE ON pets
   REFERENCING OLD TABLE AS old_pets NEW TABLE AS new_pets
   FOR EACH STATEMENT EXECUTE FUNCTION count_pet_changes()`,
  `CREATE TRIGGER pets_counted_delete AFTER DELETE ON pets REFERENCING OLD TABLE AS old_pets
   FOR EACH STATEMENT EXECUTE FUNCTION count_pet_changes()`,
];

/** A row's +1 or -1, for its category and for all (0). */
const sqliteChange = (row: 'NEW' | 'OLD', n: 1 | -1) =>
  `(${row}.category_id, coalesce(${row}.status, 'none'), ${n}), (0, coalesce(${row}.status, 'none'), ${n})`;

const SQLITE = [
  `CREATE TABLE pet_counts (
     category_id integer NOT NULL,
     status text NOT NULL,
     n integer NOT NULL,
     PRIMARY KEY (category_id, status)
   ) WITHOUT ROWID`,
  `CREATE TABLE pet_count_changes (
     category_id integer NOT NULL,
     status text NOT NULL,
     n integer NOT NULL
   )`,
  `CREATE TRIGGER pets_counted_insert AFTER INSERT ON pets BEGIN
     INSERT INTO pet_count_changes (category_id, status, n) VALUES ${sqliteChange('NEW', 1)};
   END`,
  `CREATE TRIGGER pets_counted_update AFTER UPDATE OF category_id, status ON pets
   WHEN OLD.category_id IS NOT NEW.category_id OR OLD.status IS NOT NEW.status BEGIN
     INSERT INTO pet_count_changes (category_id, status, n)
     VALUES ${sqliteChange('OLD', -1)}, ${sqliteChange('NEW', 1)};
   END`,
  `CREATE TRIGGER pets_counted_delete AFTER DELETE ON pets BEGIN
     INSERT INTO pet_count_changes (category_id, status, n) VALUES ${sqliteChange('OLD', -1)};
   END`,
];

/** The pets there are, counted once, as the changes from now on will count them. */
const COUNT_EXISTING = `INSERT INTO pet_counts (category_id, status, n)
  SELECT category_id, coalesce(status, 'none'), count(*) FROM pets
  GROUP BY category_id, coalesce(status, 'none')
  UNION ALL
  SELECT 0, coalesce(status, 'none'), count(*) FROM pets GROUP BY coalesce(status, 'none')`;

export class PetCounts1796500000000 implements MigrationInterface {
  name = 'PetCounts1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = queryRunner.connection.options.type === 'postgres' ? POSTGRES : SQLITE;
    for (const sql of [...statements, COUNT_EXISTING]) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const trigger of ['insert', 'update', 'delete'])
      await queryRunner.query(
        queryRunner.connection.options.type === 'postgres'
          ? `DROP TRIGGER pets_counted_${trigger} ON pets`
          : `DROP TRIGGER pets_counted_${trigger}`,
      );
    if (queryRunner.connection.options.type === 'postgres')
      await queryRunner.query('DROP FUNCTION count_pet_changes()');
    await queryRunner.query('DROP TABLE pet_count_changes');
    await queryRunner.query('DROP TABLE pet_counts');
  }
}
