import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The change log: one row per committed change of a pet, written in the change's transaction
 * (docs/events.md). Rows are read in (tx, seq) order. On PostgreSQL `tx` is the writing
 * transaction's id, so a reader can hold back the rows of transactions still running (see
 * `SqlRunner.commitHorizon`); on SQLite one writer commits at a time, in `seq` order, and `tx` is 0.
 */
const POSTGRES = [
  `CREATE TABLE pet_events (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     tx bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
     type text NOT NULL,
     occurred_at timestamptz NOT NULL,
     pet_id bigint NOT NULL,
     pet text NOT NULL,
     previous text NULL,
     trace_context text NULL
   )`,
  // Tells listening processes, at commit, that events were written (docs/events.md, "The stream").
  `CREATE FUNCTION pet_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_notify('pet_events', '');
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER pet_events_notify AFTER INSERT ON pet_events
   FOR EACH STATEMENT EXECUTE FUNCTION pet_events_notify()`,
];

const SQLITE = [
  `CREATE TABLE pet_events (
     seq integer PRIMARY KEY AUTOINCREMENT,
     tx integer NOT NULL DEFAULT 0,
     type text NOT NULL,
     occurred_at datetime NOT NULL,
     pet_id integer NOT NULL,
     pet text NOT NULL,
     previous text NULL,
     trace_context text NULL
   )`,
];

const COMMON = [
  `CREATE UNIQUE INDEX pet_events_position_idx ON pet_events (tx, seq)`,
  // Retention looks for the newest event past its age.
  `CREATE INDEX pet_events_occurred_at_idx ON pet_events (occurred_at)`,
  // The position of the newest event retention deleted: a cursor before it may have missed some.
  `CREATE TABLE pet_events_purged (
     singleton integer PRIMARY KEY CHECK (singleton = 1),
     tx bigint NOT NULL,
     seq bigint NOT NULL
   )`,
  `INSERT INTO pet_events_purged (singleton, tx, seq) VALUES (1, 0, 0)`,
];

export class PetEvents1795800000000 implements MigrationInterface {
  name = 'PetEvents1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const engine = queryRunner.connection.options.type === 'postgres' ? POSTGRES : SQLITE;
    for (const sql of [...engine, ...COMMON]) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE pet_events_purged');
    await queryRunner.query('DROP TABLE pet_events');
    if (queryRunner.connection.options.type === 'postgres')
      await queryRunner.query('DROP FUNCTION pet_events_notify()');
  }
}
