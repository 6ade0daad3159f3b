import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When each API key last called a deprecated operation, so operators can tell its owner before the
 * operation's sunset without Prometheus (`apikey list`; docs/observability.md, "Deprecation").
 */
export class ApiKeyDeprecatedCalls1795600000000 implements MigrationInterface {
  name = 'ApiKeyDeprecatedCalls1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp =
      queryRunner.connection.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.query(
      `ALTER TABLE api_keys ADD COLUMN last_deprecated_call_at ${timestamp} NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE api_keys DROP COLUMN last_deprecated_call_at');
  }
}
