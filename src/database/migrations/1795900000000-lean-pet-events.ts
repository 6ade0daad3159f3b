import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every create and update writes an event, so what `pet_events` does on insert is paid on the write
 * path (docs/performance.md, "The event write"). The NOTIFY trigger goes: PostgreSQL
 * serialises the commits of notifying transactions, so processes now announce commits after them
 * (change-notifications.ts). Of the indexes, keep only the one the feed reads by:
 *
 * - PostgreSQL: `(tx, seq)` becomes the primary key; `seq` alone and `occurred_at` lose theirs
 *   (retention walks from the oldest event in feed order instead).
 * - SQLite: `tx` is always 0, so the rowid `seq` is the order; the table is rebuilt without the
 *   two indexes and without AUTOINCREMENT, whose counter row is one more page per commit.
 *   Positions still never go back: retention always keeps the newest event.
 */
const POSTGRES_UP = [
  'DROP TRIGGER pet_events_notify ON pet_events',
  'DROP FUNCTION pet_events_notify()',
  'DROP INDEX pet_events_occurred_at_idx',
  'ALTER TABLE pet_events DROP CONSTRAINT pet_events_pkey',
  'ALTER TABLE pet_events ADD CONSTRAINT pet_events_pkey PRIMARY KEY USING INDEX pet_events_position_idx',
];

const POSTGRES_DOWN = [
  'ALTER TABLE pet_events DROP CONSTRAINT pet_events_pkey',
  'ALTER TABLE pet_events ADD PRIMARY KEY (seq)',
  'CREATE UNIQUE INDEX pet_events_position_idx ON pet_events (tx, seq)',
  'CREATE INDEX pet_events_occurred_at_idx ON pet_events (occurred_at)',
  `CREATE FUNCTION pet_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_notify('pet_events', '');
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER pet_events_notify AFTER INSERT ON pet_events
   FOR EACH STATEMENT EXECUTE FUNCTION pet_events_notify()`,
];

const COLUMNS = 'seq, tx, type, occurred_at, pet_id, pet, previous, trace_context';

function sqliteRebuild(seq: string): string[] {
  return [
    `CREATE TABLE pet_events_rebuilt (
       ${seq},
       tx integer NOT NULL DEFAULT 0,
       type text NOT NULL,
       occurred_at datetime NOT NULL,
       pet_id integer NOT NULL,
       pet text NOT NULL,
       previous text NULL,
       trace_context text NULL
     )`,
    `INSERT INTO pet_events_rebuilt (${COLUMNS}) SELECT ${COLUMNS} FROM pet_events`,
    'DROP TABLE pet_events',
    'ALTER TABLE pet_events_rebuilt RENAME TO pet_events',
  ];
}

const SQLITE_DOWN = [
  ...sqliteRebuild('seq integer PRIMARY KEY AUTOINCREMENT'),
  'CREATE UNIQUE INDEX pet_events_position_idx ON pet_events (tx, seq)',
  'CREATE INDEX pet_events_occurred_at_idx ON pet_events (occurred_at)',
];

export class LeanPetEvents1795900000000 implements MigrationInterface {
  name = 'LeanPetEvents1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const steps = postgres ? POSTGRES_UP : sqliteRebuild('seq integer PRIMARY KEY');
    for (const sql of steps) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const sql of postgres ? POSTGRES_DOWN : SQLITE_DOWN) await queryRunner.query(sql);
  }
}
