import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A row of `api_keys`. The key itself is never stored: only its public prefix and SHA-256. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', unique: true })
  prefix: string;

  /** Hex SHA-256 of the whole key. */
  @Column({ name: 'key_hash', type: 'text' })
  keyHash: string;

  @CreateDateColumn({ name: 'created_at' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: Date, nullable: true })
  revokedAt: Date | null;

  /** Comma-separated, in the order of SCOPES (src/auth/scopes.ts). */
  @Column({ type: 'text' })
  scopes: string;

  /** When the key stops working; null: never. */
  @Column({ name: 'expires_at', type: Date, nullable: true })
  expiresAt: Date | null;

  /** When the key was last accepted, to within a minute (ApiKeyUsage). */
  @Column({ name: 'last_used_at', type: Date, nullable: true })
  lastUsedAt: Date | null;

  /** When the key last called a deprecated operation, to within a minute. */
  @Column({ name: 'last_deprecated_call_at', type: Date, nullable: true })
  lastDeprecatedCallAt: Date | null;
}
