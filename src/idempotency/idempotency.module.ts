import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Clock } from '../time/clock.js';
import { IdempotencyKeyEntity } from './idempotency-key.entity.js';
import { IdempotencyKeySweep } from './idempotency-key-sweep.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotentCreates } from './idempotent-creates.js';

/** Idempotency-Keys: one table and one implementation for every create that takes them. */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyKeyEntity])],
  providers: [IdempotentCreates, IdempotencyKeysRepository, IdempotencyKeySweep, Clock],
  exports: [IdempotentCreates],
})
export class IdempotencyModule {}
