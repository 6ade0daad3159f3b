import { Injectable } from '@nestjs/common';
import { ApiError, notFound } from '../errors/api-error.js';
import { type IfMatch, ifMatchAllows } from '../http/if-match.js';
import { DEFAULT_PAGE_SIZE } from '../http/page-limit.js';
import { ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { NewPetDto } from './dto/new-pet.dto.js';
import { PetDto } from './dto/pet.dto.js';
import type { PetPatchDto } from './dto/pet-patch.dto.js';
import { encodeCursor } from '../http/page-cursor.js';
import { PetEntity } from './pet.entity.js';
import { petEntityTag } from './pet-entity-tag.js';
import { canTransition, invalidTransition } from './pet-lifecycle.js';
import { type NewPetRow, type PetFields, PetsRepository } from './pets.repository.js';
import type { SqlTransaction } from '../database/sql-runner.js';
import { requestHash } from '../idempotency/idempotency-key.js';
import type { StoredResponse } from '../idempotency/idempotency-keys.repository.js';
import { IdempotentCreates } from '../idempotency/idempotent-creates.js';
import type { PetEventRecord } from '../events/pet-event.js';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { petHeld, PetHolds } from '../orders/pet-holds.js';
import { currentTraceParent } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';

export interface PetPage {
  pets: PetDto[];
  /** Query parameters of the next page; absent on the last page. */
  next?: Record<string, string>;
}

/** One pet as answers carry it: the Pet and its strong ETag (pet-entity-tag.ts). */
export interface TaggedPet {
  pet: PetDto;
  etag: string;
}

/**
 * A createPet answer with an Idempotency-Key: the pet this request created, or the response an
 * earlier request with the same key got, as it was sent.
 */
export type CreatedPet = (TaggedPet & { replayed: false }) | (StoredResponse & { replayed: true });

@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly events: PetEventsRepository,
    private readonly clock: Clock,
    private readonly holds: PetHolds,
    private readonly idempotency: IdempotentCreates,
  ) {}

  async list({
    limit = DEFAULT_PAGE_SIZE,
    status,
    categoryId,
    cursor: afterId = 0,
  }: ListPetsQueryDto): Promise<PetPage> {
    // One row more than asked says whether a next page exists without a count query.
    const rows = await this.pets.findPage({ afterId, status, categoryId, limit: limit + 1 });
    const pets = rows.slice(0, limit).map(toPetDto);
    if (rows.length <= limit) return { pets };
    return {
      pets,
      next: {
        limit: String(limit),
        ...(status && { status }),
        ...(categoryId !== undefined && { categoryId: String(categoryId) }),
        cursor: encodeCursor(pets[pets.length - 1].id),
      },
    };
  }

  async create(newPet: NewPetDto): Promise<TaggedPet> {
    const created = await this.pets.create(newPetRow(newPet), this.eventRecord());
    this.events.committed('pet.created');
    return tagged(created);
  }

  /**
   * Creates the pet once per (API key, Idempotency-Key) while the key lasts (docs/api-design.md,
   * "Idempotency"): the pet, its event and the claim with the response a retry gets, in one
   * transaction. A claim stored without its response answers with the pet as it is.
   */
  async createOnce(newPet: NewPetDto, apiKeyId: number, key: string): Promise<CreatedPet> {
    const { name, categoryId, status } = newPet;
    const once = await this.idempotency.once(
      { apiKeyId, key, requestHash: requestHash([name, categoryId, status ?? null]) },
      (claimKey) =>
        this.pets.transaction(async (transaction) => {
          const created = await this.pets.insert(
            transaction,
            newPetRow(newPet),
            this.eventRecord(),
          );
          const answer = tagged(created);
          await claimKey(transaction, created.id, sentResponse(answer));
          return answer;
        }),
      async (petId) => sentResponse(await this.getLatest(petId)),
    );
    if (once.replayed) return { ...once.response, replayed: true };
    this.events.committed('pet.created');
    return { ...once.created, replayed: false };
  }

  /** What every event records besides the pet: now, and the trace of the request making it. */
  private eventRecord(previous?: Record<string, unknown>): PetEventRecord {
    return { occurredAt: this.clock.now(), traceContext: currentTraceParent(), previous };
  }

  async get(id: number): Promise<TaggedPet> {
    const pet = await this.pets.findById(id);
    if (!pet) throw notFound(`No pet with id ${id}`);
    return tagged(pet);
  }

  /** The pet as the primary has it, where a claim committed a moment ago names it. */
  private async getLatest(id: number): Promise<TaggedPet> {
    const pet = await this.pets.findLatestById(id);
    if (!pet) throw notFound(`No pet with id ${id}`);
    return tagged(pet);
  }

  /**
   * Applies a merge patch (docs/api-design.md, "The pet lifecycle"). Optimistic first: the pet is
   * read, the patch checked against it, and the change written only if the pet is still at the
   * revision read, in two statements and no lock. When another change came first, the checks run
   * again on the pet read with its row locked, in the transaction that writes it, so of concurrent
   * changes each sees the one before it: of N sales of one pet exactly one succeeds. Refusals
   * answer in the documented order: 404, 412, 409. A patch that changes nothing writes nothing.
   */
  async update(id: number, patch: PetPatchDto, ifMatch: IfMatch | undefined): Promise<TaggedPet> {
    const current = await this.pets.findLatestById(id);
    if (!current) throw notFound(`No pet with id ${id}`);
    // Only a pending pet can be held (docs/api-design.md, "Orders"); a lapsed hold ends first.
    const hold = current.status === 'pending' ? await this.holds.holdOf(id) : 'free';
    if (hold === 'released') return this.update(id, patch, ifMatch);
    const next = patched(current, patch, ifMatch, hold === 'held');
    if (!next) return tagged(current);
    const updated = await this.pets.updateIfAt(
      current.revision,
      next,
      this.changeRecord(current, next),
    );
    if (!updated) return this.updateLocked(id, patch, ifMatch);
    this.events.committed('pet.updated');
    return tagged(updated);
  }

  private async updateLocked(
    id: number,
    patch: PetPatchDto,
    ifMatch: IfMatch | undefined,
  ): Promise<TaggedPet> {
    const { pet, changed } = await this.whileLocked(id, async (transaction, current, held) => {
      const next = patched(current, patch, ifMatch, held);
      if (!next) return { pet: current, changed: false };
      const record = this.changeRecord(current, next);
      return {
        pet: await this.pets.update(transaction, current.revision, next, record),
        changed: true,
      };
    });
    if (changed) this.events.committed('pet.updated');
    return tagged(pet);
  }

  /**
   * Removes the pet (docs/api-design.md, "The catalogue"), optimistic first as `update` is: the
   * checks in the documented order, 404, 412, 409 (held by an open order), on the pet read, then
   * the deletion with its pet.deleted event only if the pet is still at that revision. An order
   * placed meanwhile moves the revision, so then the checks run again with the row locked.
   */
  async delete(id: number, ifMatch: IfMatch | undefined): Promise<void> {
    const current = await this.pets.findLatestById(id);
    if (!current) throw notFound(`No pet with id ${id}`);
    const hold = current.status === 'pending' ? await this.holds.holdOf(id) : 'free';
    if (hold === 'released') return this.delete(id, ifMatch);
    checkIfMatch(current, ifMatch);
    if (hold === 'held') throw petHeld(id);
    if (!(await this.pets.deleteIfAt(current, this.eventRecord()))) {
      return this.deleteLocked(id, ifMatch);
    }
    this.events.committed('pet.deleted');
  }

  private async deleteLocked(id: number, ifMatch: IfMatch | undefined): Promise<void> {
    await this.whileLocked(id, async (transaction, current, held) => {
      checkIfMatch(current, ifMatch);
      if (held) throw petHeld(id);
      await this.pets.delete(transaction, current, this.eventRecord());
    });
    this.events.committed('pet.deleted');
  }

  /**
   * Runs `change` in one transaction with the pet's row locked, so no order of it starts or ends
   * meanwhile, and `held` saying whether an open order holds it (docs/api-design.md, "Orders"). A
   * hold whose deadline passed is expired first, in a transaction of its own, which needs this
   * row: this one rolls back and starts again after it.
   */
  private async whileLocked<T>(
    id: number,
    change: (transaction: SqlTransaction, current: PetEntity, held: boolean) => Promise<T>,
  ): Promise<T> {
    try {
      return await this.pets.transaction(async (transaction) => {
        const current = await this.pets.lockById(transaction, id);
        if (!current) throw notFound(`No pet with id ${id}`);
        // Only a pending pet can be held.
        const hold =
          current.status === 'pending' ? await this.holds.holdWhileLocked(transaction, id) : 'free';
        if (hold === 'lapsed') throw new HoldLapsed();
        return await change(transaction, current, hold === 'held');
      });
    } catch (error) {
      if (!(error instanceof HoldLapsed)) throw error;
      await this.holds.holdOf(id);
      return this.whileLocked(id, change);
    }
  }

  private changeRecord(current: PetEntity, next: PetFields): PetEventRecord {
    return this.eventRecord(previousFields(current, next));
  }
}

/**
 * The pet's fields after the patch; undefined when it changes nothing. Throws the refusal the
 * patch earns against `current`: 412, then 409 (a status change of a `held` pet first).
 */
function patched(
  current: PetEntity,
  patch: PetPatchDto,
  ifMatch: IfMatch | undefined,
  held: boolean,
): PetFields | undefined {
  checkIfMatch(current, ifMatch);
  if (held && patch.status !== undefined) throw petHeld(current.id);
  if (patch.status !== undefined && !canTransition(current.status, patch.status)) {
    throw invalidTransition(current.id, current.status, patch.status);
  }
  const next = {
    id: current.id,
    name: patch.name ?? current.name,
    categoryId: patch.categoryId ?? current.categoryId,
    status: patch.status ?? current.status,
  };
  return sameFields(current, next) ? undefined : next;
}

/** 412 unless If-Match is absent or names the pet's current ETag. */
function checkIfMatch(current: PetEntity, ifMatch: IfMatch | undefined): void {
  if (!ifMatchAllows(ifMatch, etagOf(current))) {
    throw new ApiError(
      'PRECONDITION_FAILED',
      `If-Match does not match the current ETag of pet ${current.id}: read the pet again, then retry`,
    );
  }
}

/** Thrown inside a locked change to roll it back: the pet's hold lapsed and is released first. */
class HoldLapsed extends Error {}

/** The changed members' old values, in the Pet's order; a status the pet lacked as null. */
function previousFields(pet: PetEntity, next: PetFields): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  if (pet.name !== next.name) previous.name = pet.name;
  if (pet.categoryId !== next.categoryId) previous.categoryId = pet.categoryId;
  if (pet.status !== next.status) previous.status = pet.status;
  return previous;
}

function sameFields(pet: PetEntity, next: PetFields): boolean {
  return pet.name === next.name && pet.categoryId === next.categoryId && pet.status === next.status;
}

function etagOf(pet: PetEntity): string {
  return petEntityTag(pet.id, pet.revision);
}

function tagged(pet: PetEntity): TaggedPet {
  return { pet: toPetDto(pet), etag: etagOf(pet) };
}

/**
 * The response as the controller sends it: the compiled serializer writes a Pet as JSON.stringify
 * does (src/pets/dto/pet-response.schema.ts).
 */
function sentResponse({ pet, etag }: TaggedPet): StoredResponse {
  return { body: JSON.stringify(pet), etag };
}

function newPetRow({ name, categoryId, status }: NewPetDto): NewPetRow {
  return { name, categoryId, status: status ?? null };
}

function toPetDto({ id, name, categoryId, status }: PetEntity): PetDto {
  return status === null ? { id, name, categoryId } : { id, name, categoryId, status };
}
