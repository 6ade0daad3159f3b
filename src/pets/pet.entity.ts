import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { PetStatus } from './pet-status.js';

/**
 * A row of `pets`, as `PetsRepository` returns it: storage only; the wire shape is `PetDto`. The
 * table itself is defined by the migrations in `src/database/migrations`.
 */
@Entity({ name: 'pets' })
export class PetEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'category_id', type: 'bigint' })
  categoryId: number;

  /** NULL when the client gave no status: there is no default. */
  @Column({ type: 'text', nullable: true })
  status: PetStatus | null;

  /** 1 when added, one more with every change: the pet's ETag (pet-entity-tag.ts). */
  @Column({ type: 'integer', default: 1 })
  revision: number;
}
