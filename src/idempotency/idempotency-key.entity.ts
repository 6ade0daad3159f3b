import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A row of `idempotency_keys`: what a create request with this Idempotency-Key made (a pet, or an
 * order of a pet), for which API key, the answer it got, and until when a retry gets that answer
 * back (docs/api-design.md, "Idempotency").
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKeyEntity {
  @PrimaryColumn({ name: 'api_key_id', type: 'integer' })
  apiKeyId: number;

  @PrimaryColumn({ type: 'text' })
  key: string;

  /** SHA-256 of the request's validated fields: a retry must ask for the same thing. */
  @Column({ name: 'request_hash', type: 'text' })
  requestHash: string;

  /** The pet created, or the pet an order created holds. */
  @Column({ name: 'pet_id', type: 'bigint' })
  petId: number;

  @Column({ name: 'expires_at', type: Date })
  expiresAt: Date;

  /** The first 201's body as sent; NULL where the migration that added it found no pet.created. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** The first 201's ETag; NULL with `responseBody`. */
  @Column({ name: 'response_etag', type: 'text', nullable: true })
  responseEtag: string | null;
}
