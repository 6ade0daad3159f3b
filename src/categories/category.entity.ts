import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A row of `categories`, as `CategoriesRepository` returns it: storage only; the wire shape is
 * `CategoryDto`. The table itself is defined by the migrations in `src/database/migrations`.
 */
@Entity({ name: 'categories' })
export class CategoryEntity {
  /** Chosen by the client, as a pet's categoryId always was. */
  @PrimaryColumn({ type: 'bigint' })
  id: number;

  /** NULL once the category is deleted: the row stays, so its revision keeps counting. */
  @Column({ type: 'text', nullable: true, unique: true })
  name: string | null;

  /** One more with every change, deletion included: the category's ETag (category-entity-tag.ts). */
  @Column({ type: 'integer', default: 1 })
  revision: number;
}

/** A category that has a name: the only kind the API shows. */
export type NamedCategory = CategoryEntity & { name: string };
