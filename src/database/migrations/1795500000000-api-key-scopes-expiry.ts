import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys get scopes, an optional expiry and the time of their last use (docs/api-design.md,
 * "API keys"). Keys that exist already keep what they could do: both scopes, no expiry.
 */
export class ApiKeyScopesExpiry1795500000000 implements MigrationInterface {
  name = 'ApiKeyScopesExpiry1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp =
      queryRunner.connection.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.query(
      `ALTER TABLE api_keys ADD COLUMN scopes text NOT NULL DEFAULT 'pets:read,pets:write'`,
    );
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN expires_at ${timestamp} NULL`);
    await queryRunner.query(`ALTER TABLE api_keys ADD COLUMN last_used_at ${timestamp} NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ['last_used_at', 'expires_at', 'scopes']) {
      await queryRunner.query(`ALTER TABLE api_keys DROP COLUMN ${column}`);
    }
  }
}
