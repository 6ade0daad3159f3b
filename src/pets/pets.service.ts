import { Injectable } from '@nestjs/common';
import { notFound } from '../common/api-error.js';
import { DEFAULT_PAGE_SIZE, ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { NewPetDto } from './dto/new-pet.dto.js';
import { PetDto } from './dto/pet.dto.js';
import { decodeCursor, encodeCursor } from './page-cursor.js';
import { PetEntity } from './pet.entity.js';
import { PetsRepository } from './pets.repository.js';

export interface PetPage {
  pets: PetDto[];
  /** Query parameters of the next page; absent on the last page. */
  next?: Record<string, string>;
}

@Injectable()
export class PetsService {
  constructor(private readonly pets: PetsRepository) {}

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

  async get(id: number): Promise<PetDto> {
    const pet = await this.pets.findById(id);
    if (!pet) throw notFound(`No pet with id ${id}`);
    return toPetDto(pet);
  }
}

function toPetDto({ id, name, categoryId, status }: PetEntity): PetDto {
  return status === null ? { id, name, categoryId } : { id, name, categoryId, status };
}
