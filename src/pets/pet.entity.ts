import { Column, Entity, Generated, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../database/column-transformers.js';
import type { PetStatus } from './pet-status.js';

/** A row of `pets`: storage only; the wire shape is `PetDto`. */
@Entity({ name: 'pets' })
export class PetEntity {
  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber })
  @Generated('increment')
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'category_id', type: 'bigint', transformer: bigintAsNumber })
  categoryId: number;

  /** NULL when the client gave no status: the seed states no default. */
  @Column({ type: 'text', nullable: true })
  status: PetStatus | null;
}
