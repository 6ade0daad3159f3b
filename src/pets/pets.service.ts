import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { ApiError, IDEMPOTENCY_KEY_REUSED_MESSAGE, notFound } from '../errors/api-error.js';
import { DEFAULT_PAGE_SIZE, ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { NewPetDto } from './dto/new-pet.dto.js';
import { PetDto } from './dto/pet.dto.js';
import { createPetRequestHash, IDEMPOTENCY_KEY_TTL_MS } from './idempotency-key.js';
import { decodeCursor, encodeCursor } from './page-cursor.js';
import { PetEntity } from './pet.entity.js';
import { PetsRepository } from './pets.repository.js';

export interface PetPage {
  pets: PetDto[];
  /** Query parameters of the next page; absent on the last page. */
  next?: Record<string, string>;
}

export interface CreatedPet {
  pet: PetDto;
  /** True when an earlier request with the same Idempotency-Key created it. */
  replayed: boolean;
}

/** How often expired keys are forgotten; a stale one is also freed when reused. */
const EXPIRED_KEY_SWEEP_MS = 60 * 60 * 1000;

@Injectable()
export class PetsService {
  private readonly logger = new Logger('Pets');

  constructor(private readonly pets: PetsRepository) {}

  /** Every instance sweeps; the DELETE is idempotent, so overlapping sweeps are harmless. */
  @Interval(EXPIRED_KEY_SWEEP_MS)
  async forgetExpiredIdempotencyKeys(): Promise<void> {
    try {
      await this.pets.deleteExpiredClaims(new Date());
    } catch (error) {
      this.logger.warn(`expired Idempotency-Keys not swept: ${(error as Error).message}`);
    }
  }

  async list({ limit = DEFAULT_PAGE_SIZE, status, cursor }: ListPetsQueryDto): Promise<PetPage> {
    const afterId = cursor === undefined ? 0 : decodeCursor(cursor)!;
    // One row more than asked says whether a next page exists without a count query.
    const rows = await this.pets.findPage({ afterId, status, limit: limit + 1 });
    const pets = rows.slice(0, limit).map(toPetDto);
    if (rows.length <= limit) return { pets };
    return {
      pets,
      next: {
        limit: String(limit),
        ...(status && { status }),
        cursor: encodeCursor(pets[pets.length - 1].id),
      },
    };
  }

  async create({ name, categoryId, status }: NewPetDto): Promise<PetDto> {
    return toPetDto(await this.pets.insert({ name, categoryId, status: status ?? null }));
  }

  /**
   * Creates the pet once per (API key, Idempotency-Key) while the key lasts (docs/api-design.md,
   * "Idempotency"): a retry with the same body gets the first pet back, with another body a 422.
   * A concurrent duplicate waits for the first one's transaction, then gets its pet.
   */
  async createOnce(newPet: NewPetDto, apiKeyId: number, key: string): Promise<CreatedPet> {
    const requestHash = createPetRequestHash(newPet);
    const row = { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? null };
    // Each pass either settles or saw the key freed (expired) since the last: a few always do.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = new Date();
      const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS);
      const created = await this.pets.insertClaimed(row, { apiKeyId, key, requestHash, expiresAt });
      if (created) return { pet: toPetDto(created), replayed: false };

      const earlier = await this.pets.findClaimedPet(apiKeyId, key);
      if (!earlier) continue;
      if (earlier.expiresAt <= now) {
        await this.pets.deleteExpiredClaim(apiKeyId, key, now);
        continue;
      }
      if (earlier.requestHash !== requestHash) {
        throw new ApiError('IDEMPOTENCY_KEY_REUSED', IDEMPOTENCY_KEY_REUSED_MESSAGE);
      }
      return { pet: toPetDto(earlier.pet), replayed: true };
    }
    throw new Error('Idempotency-Key claim did not settle');
  }

  async get(id: number): Promise<PetDto> {
    const pet = await this.pets.findById(id);
    if (!pet) throw notFound(`No pet with id ${id}`);
    return toPetDto(pet);
  }
}

function toPetDto({ id, name, categoryId, status }: PetEntity): PetDto {
  return status === null ? { id, name, categoryId } : { id, name, categoryId, status };
}
