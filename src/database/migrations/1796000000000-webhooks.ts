import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions and the deliveries owed to them (docs/events.md, "Webhooks"). A
 * subscription's cursor (after_tx, after_seq) is the event position up to which its deliveries
 * have been recorded; the worker moves it on in the transaction that records them, so a crash at
 * any instant loses none. Its lease says which instance sends for it until when.
 */
function subscriptions(id: string, time: string, position: string): string {
  return `CREATE TABLE webhook_subscriptions (
     id ${id},
     url text NOT NULL,
     event_types text NULL,
     secret text NOT NULL,
     previous_secret text NULL,
     previous_secret_expires_at ${time} NULL,
     created_at ${time} NOT NULL,
     disabled_at ${time} NULL,
     disabled_reason text NULL,
     last_success_at ${time} NULL,
     last_failure_at ${time} NULL,
     last_failure_reason text NULL,
     after_tx ${position} NOT NULL,
     after_seq ${position} NOT NULL,
     leased_until ${time} NULL,
     lease_owner text NULL
   )`;
}

function deliveries(time: string, position: string): string {
  return `CREATE TABLE webhook_deliveries (
     subscription_id ${position} NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
     event_tx ${position} NOT NULL,
     event_seq ${position} NOT NULL,
     state text NOT NULL CHECK (state IN ('pending', 'given_up')),
     attempts integer NOT NULL,
     next_attempt_at ${time} NOT NULL,
     last_attempt_at ${time} NULL,
     last_status integer NULL,
     last_error text NULL,
     PRIMARY KEY (subscription_id, event_tx, event_seq)
   )`;
}

const POSTGRES = [
  subscriptions('bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', 'timestamptz', 'bigint'),
  deliveries('timestamptz', 'bigint'),
];

// AUTOINCREMENT: a deleted subscription's id is never given to a new one.
const SQLITE = [
  subscriptions('integer PRIMARY KEY AUTOINCREMENT', 'datetime', 'integer'),
  deliveries('datetime', 'integer'),
];

export class Webhooks1796000000000 implements MigrationInterface {
  name = 'Webhooks1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const sql of postgres ? POSTGRES : SQLITE) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhook_subscriptions');
  }
}
