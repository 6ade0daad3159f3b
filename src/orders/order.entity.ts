import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { OrderStatus } from './order-status.js';

/**
 * A row of `orders`, as `OrdersRepository` returns it: storage only; the wire shape is `OrderDto`.
 * The table itself is defined by the migrations in `src/database/migrations`.
 */
@Entity({ name: 'orders' })
export class OrderEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ name: 'pet_id', type: 'bigint' })
  petId: number;

  @Column({ type: 'text' })
  status: OrderStatus;

  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** The hold's deadline: from this instant on the order can only expire. */
  @Column({ name: 'expires_at', type: Date })
  expiresAt: Date;

  /** When the order stopped being open; an expired order's is its `expiresAt`. */
  @Column({ name: 'closed_at', type: Date, nullable: true })
  closedAt: Date | null;

  /** 1 while open, 2 once closed: the order's ETag (order-entity-tag.ts). */
  @Column({ type: 'integer', default: 1 })
  revision: number;
}
