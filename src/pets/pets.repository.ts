import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { MoreThan, Repository } from 'typeorm';
import { PetEntity } from './pet.entity.js';
import type { PetStatus } from './pet-status.js';

export interface PetPageQuery {
  /** Only pets with a greater id: keyset pagination, so page N costs what page 1 costs. */
  afterId: number;
  status?: PetStatus;
  limit: number;
}

/** All SQL that touches `pets`. */
@Injectable()
export class PetsRepository {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  findPage({ afterId, status, limit }: PetPageQuery): Promise<PetEntity[]> {
    return this.pets.find({
      where: { id: MoreThan(afterId), ...(status && { status }) },
      order: { id: 'ASC' },
      take: limit,
    });
  }

  findById(id: number): Promise<PetEntity | null> {
    return this.pets.findOneBy({ id });
  }

  insert(pet: Omit<PetEntity, 'id'>): Promise<PetEntity> {
    return this.pets.save(this.pets.create(pet));
  }
}
