import { Injectable } from '@nestjs/common';
import type { SqlTransaction } from '../database/sql-runner.js';
import { ApiError, IDEMPOTENCY_KEY_REUSED_MESSAGE } from '../errors/api-error.js';
import { Clock } from '../time/clock.js';
import { IDEMPOTENCY_KEY_TTL_MS } from './idempotency-key.js';
import {
  type Claim,
  IdempotencyKeysRepository,
  type StoredResponse,
} from './idempotency-keys.repository.js';

/** A create made once per key: what this request created, or the first request's answer. */
export type Once<T> =
  { replayed: false; created: T } | { replayed: true; response: StoredResponse };

/** Who asks, with which key, for what (a hash of the request's fields, idempotency-key.ts). */
export interface IdempotentRequest {
  apiKeyId: number;
  key: string;
  requestHash: string;
}

/**
 * Claims the key inside the create's transaction, with the pet it made or holds and the answer
 * a retry gets; throws, rolling the transaction back, when the key is already claimed.
 */
export type ClaimKey = (
  transaction: SqlTransaction,
  petId: number,
  response: StoredResponse,
) => Promise<void>;

/** Thrown inside a create's transaction to roll it back when the key is already claimed. */
class ClaimTaken extends Error {}

/**
 * Idempotency-Key on the creates, createPet and createOrder alike (docs/api-design.md,
 * "Idempotency"): once per (API key, Idempotency-Key) while the key lasts. A retry with the same
 * request gets the first response back, however things changed since; with another request, a
 * 422. A concurrent duplicate waits for the first one's transaction, then gets its response.
 */
@Injectable()
export class IdempotentCreates {
  constructor(
    private readonly claims: IdempotencyKeysRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Runs `create`, which writes in one transaction and claims the key in it with `claimKey`; or,
   * when the key was claimed, answers as the first request was answered (`storedless` gives that
   * answer for a claim stored without its response).
   */
  async once<T>(
    request: IdempotentRequest,
    create: (claimKey: ClaimKey) => Promise<T>,
    storedless: (petId: number) => Promise<StoredResponse>,
  ): Promise<Once<T>> {
    const { apiKeyId, key, requestHash } = request;
    // Each pass either settles or saw the key freed (expired) since the last: a few always do.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS);
      const claimKey: ClaimKey = async (transaction, petId, response) => {
        const claim = { apiKeyId, key, requestHash, expiresAt, petId };
        if (!(await this.claims.claim(transaction, claim, response))) throw new ClaimTaken();
      };
      // A refusal (say, a 409 because the first request holds what this one asked for) may
      // come from a duplicate of a request in flight: its claim, once committed, answers.
      let refusal: ApiError | undefined;
      try {
        return { replayed: false, created: await create(claimKey) };
      } catch (error) {
        if (error instanceof ApiError) refusal = error;
        else if (!(error instanceof ClaimTaken)) throw error;
      }
      const earlier = await this.claims.findClaim(apiKeyId, key);
      if (!earlier) {
        if (refusal) throw refusal;
        continue;
      }
      if (earlier.expiresAt <= now) {
        await this.claims.deleteExpiredClaim(apiKeyId, key, now);
        continue;
      }
      return { replayed: true, response: await this.replay(earlier, requestHash, storedless) };
    }
    throw new Error('Idempotency-Key claim did not settle');
  }

  private async replay(
    earlier: Claim,
    requestHash: string,
    storedless: (petId: number) => Promise<StoredResponse>,
  ): Promise<StoredResponse> {
    if (earlier.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', IDEMPOTENCY_KEY_REUSED_MESSAGE);
    }
    return earlier.response ?? storedless(earlier.petId);
  }
}
