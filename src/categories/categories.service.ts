import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../database/database-errors.js';
import { ApiError, notFound } from '../errors/api-error.js';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { type IfMatch, ifMatchAllows } from '../http/if-match.js';
import { encodeCursor } from '../http/page-cursor.js';
import { DEFAULT_PAGE_SIZE } from '../http/page-limit.js';
import { currentTraceParent } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import { type CategoryEventRecord, CategoriesRepository } from './categories.repository.js';
import type { CategoryEntity, NamedCategory } from './category.entity.js';
import { categoryEntityTag } from './category-entity-tag.js';
import type { CategoryDto } from './dto/category.dto.js';
import type { ListCategoriesQueryDto } from './dto/list-categories-query.dto.js';

/** One category as answers carry it: the Category and its strong ETag. */
export interface TaggedCategory {
  category: CategoryDto;
  etag: string;
}

export interface CategoryPage {
  categories: CategoryDto[];
  /** Query parameters of the next page; absent on the last page. */
  next?: Record<string, string>;
}

/** What putCategory did: named an unnamed id (201), or renamed or kept a named one (200). */
export type PutCategory = TaggedCategory & { created: boolean };

/** Thrown inside a transaction to roll it back when another transaction added the id first. */
class IdTakenMeanwhile extends Error {}

/** A PUT of a new id meets one concurrent PUT of that id at most once: then the row exists. */
const PUT_ATTEMPTS = 3;

@Injectable()
export class CategoriesService {
  constructor(
    private readonly categories: CategoriesRepository,
    private readonly events: PetEventsRepository,
    private readonly clock: Clock,
  ) {}

  async list({
    limit = DEFAULT_PAGE_SIZE,
    cursor: afterId = 0,
  }: ListCategoriesQueryDto): Promise<CategoryPage> {
    // One row more than asked says whether a next page exists without a count query.
    const rows = await this.categories.findPage(afterId, limit + 1);
    const categories = rows.slice(0, limit).map(toCategoryDto);
    if (rows.length <= limit) return { categories };
    const last = categories[categories.length - 1];
    return { categories, next: { limit: String(limit), cursor: encodeCursor(last.id) } };
  }

  async get(id: number): Promise<TaggedCategory> {
    const category = named(await this.categories.findById(id));
    if (!category) throw categoryNotFound(id);
    return tagged(category);
  }

  /**
   * Names category `id` (docs/api-design.md, "The catalogue"). Optimistic first, as updatePet is:
   * the row read, If-Match checked against it, and the name written with its event only if the
   * row is still at the revision read (or, for a new id, still absent), in two statements and no
   * lock. When another change came first, the checks run again on the row locked in the
   * transaction that writes it, so concurrent changes of one category apply one after another.
   * The name's UNIQUE constraint refuses a name another category has, so of concurrent claims of
   * one name exactly one commits. The same name again changes nothing and writes nothing.
   */
  async put(id: number, name: string, ifMatch: IfMatch | undefined): Promise<PutCategory> {
    try {
      return (
        (await this.putIfUnchanged(id, name, ifMatch)) ?? (await this.putLocked(id, name, ifMatch))
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
  }

  /** The optimistic put: undefined, having written nothing, when another change came first. */
  private async putIfUnchanged(
    id: number,
    name: string,
    ifMatch: IfMatch | undefined,
  ): Promise<PutCategory | undefined> {
    const row = await this.categories.findLatestById(id);
    const current = named(row);
    checkIfMatch(id, current, ifMatch);
    if (current?.name === name) return { ...tagged(current), created: false };
    const record = this.eventRecord(current?.name);
    const written = await this.categories.nameIfAt(id, name, row?.revision, record);
    if (!written) return undefined;
    this.events.committed('category.updated');
    return { ...tagged(written), created: !current };
  }

  private async putLocked(id: number, name: string, ifMatch: IfMatch | undefined) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.putOnce(id, name, ifMatch);
      } catch (error) {
        if (!(error instanceof IdTakenMeanwhile) || attempt === PUT_ATTEMPTS) throw error;
      }
    }
  }

  private async putOnce(id: number, name: string, ifMatch: IfMatch | undefined) {
    const { result, changed } = await this.categories.transaction(async (transaction) => {
      const row = await this.categories.lockById(transaction, id);
      const current = named(row);
      checkIfMatch(id, current, ifMatch);
      if (current?.name === name) return { result: { ...tagged(current), created: false } };
      const written = row
        ? ((await this.categories.setName(transaction, id, name)) as NamedCategory)
        : await this.categories.insert(transaction, id, name);
      if (!written) throw new IdTakenMeanwhile();
      const record = this.eventRecord(current?.name);
      await this.categories.insertEvent(transaction, 'category.updated', written, record);
      return { result: { ...tagged(written), created: !current }, changed: true };
    });
    if (changed) this.events.committed('category.updated');
    return result;
  }

  /** Removes the name only: pets keep their categoryId (docs/api-design.md, "The catalogue"). */
  async delete(id: number, ifMatch: IfMatch | undefined): Promise<void> {
    await this.categories.transaction(async (transaction) => {
      const current = named(await this.categories.lockById(transaction, id));
      if (!current) throw categoryNotFound(id);
      checkIfMatch(id, current, ifMatch);
      await this.categories.setName(transaction, id, null);
      await this.categories.insertEvent(
        transaction,
        'category.deleted',
        current,
        this.eventRecord(),
      );
    });
    this.events.committed('category.deleted');
  }

  private eventRecord(previousName?: string): CategoryEventRecord {
    return { occurredAt: this.clock.now(), traceContext: currentTraceParent(), previousName };
  }
}

/** The category when it has a name; a deleted or never-named id has none. */
function named(category: CategoryEntity | null): NamedCategory | undefined {
  return category?.name == null ? undefined : (category as NamedCategory);
}

/** 412 unless If-Match is absent or names the current ETag; an unnamed id has none to match. */
function checkIfMatch(
  id: number,
  current: NamedCategory | undefined,
  ifMatch: IfMatch | undefined,
) {
  if (ifMatch === undefined) return;
  if (current && ifMatchAllows(ifMatch, etagOf(current))) return;
  throw new ApiError(
    'PRECONDITION_FAILED',
    `If-Match does not match the current ETag of category ${id}: read the category again, then retry`,
  );
}

export const categoryNotFoundMessage = (id: number): string => `No category with id ${id}`;

const categoryNotFound = (id: number): ApiError => notFound(categoryNotFoundMessage(id));

export const nameTakenMessage = (name: string): string =>
  `Another category is already named ${JSON.stringify(name)}: choose another name`;

const nameTaken = (name: string): ApiError =>
  new ApiError('CATEGORY_NAME_TAKEN', nameTakenMessage(name));

function etagOf({ id, revision }: CategoryEntity): string {
  return categoryEntityTag(id, revision);
}

function tagged(category: NamedCategory): TaggedCategory {
  return { category: toCategoryDto(category), etag: etagOf(category) };
}

function toCategoryDto({ id, name }: NamedCategory): CategoryDto {
  return { id, name };
}
