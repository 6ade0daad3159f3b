import {
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { ClientAddressResolver } from '../http/client-address.js';
import {
  InProcessFailureCounters,
  RedisFailureCounters,
  type AuthFailureCounters,
} from './auth-failure-counters.js';
import { addressCache } from './address-cache.js';

const MAX_BLOCKED_ADDRESSES = 100_000;

/**
 * Failed authentication costs an attacker, not us (docs/api-design.md, "Rate limits"; OWASP
 * API4): past AUTH_FAILURE_LIMIT_PER_MINUTE failures in a minute from one client address, its
 * requests are refused with 429 before any key lookup, until the minute is over.
 */
@Injectable()
export class AuthFailureLimiter implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly limit: number;
  private readonly addresses: ClientAddressResolver;
  private readonly counters: AuthFailureCounters;
  /**
   * Addresses known to be over the limit, and until when: a window over the limit stays so until
   * it ends, so a flood is refused from memory, without asking Redis per request.
   */
  private readonly blockedUntil = addressCache<number>(MAX_BLOCKED_ADDRESSES);

  constructor(
    config: AppConfig,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.limit = config.authFailureLimitPerMinute;
    this.addresses = new ClientAddressResolver(config.trustedProxies);
    this.counters = config.redisUrl
      ? new RedisFailureCounters(config.redisUrl, (error) =>
          this.logger.warn(`Redis: ${error.message}`),
        )
      : new InProcessFailureCounters();
  }

  get enabled(): boolean {
    return this.limit > 0;
  }

  clientAddress(request: FastifyRequest): string {
    return this.addresses.resolve(request.socket.remoteAddress, request.headers['x-forwarded-for']);
  }

  /** Throws the 429 when the address is over its limit. A counter store that cannot answer (Redis down) lets the request through. */
  async refuseIfOverLimit(address: string): Promise<void> {
    const now = Date.now();
    let until = this.blockedUntil.get(address) ?? 0;
    if (until <= now) {
      this.blockedUntil.delete(address);
      try {
        const { failures, windowLeftMs } = await this.counters.read(address);
        if (failures < this.limit) return;
        until = this.block(address, now + windowLeftMs);
      } catch (error) {
        this.logger.warn(`auth failure limit not enforced: ${(error as Error).message}`);
        return;
      }
    }
    throw this.tooManyFailures(until - now);
  }

  async recordFailure(address: string): Promise<void> {
    try {
      const { failures, windowLeftMs } = await this.counters.add(address);
      if (failures >= this.limit) this.block(address, Date.now() + windowLeftMs);
    } catch (error) {
      this.logger.warn(`auth failure not counted: ${(error as Error).message}`);
    }
  }

  /** Waits briefly for a shared store, so a new instance counts failures from its first request. */
  async onModuleInit(): Promise<void> {
    if (!(await this.counters.ready()))
      this.logger.warn('Redis not reachable at start; failed authentications count once it is');
  }

  async onModuleDestroy(): Promise<void> {
    await this.counters.close();
  }

  private block(address: string, until: number): number {
    this.blockedUntil.set(address, until);
    return until;
  }

  private tooManyFailures(msLeft: number): ApiError {
    this.metrics?.rateLimited.inc({ limit: 'auth_failures' });
    const seconds = String(Math.max(1, Math.ceil(msLeft / 1000)));
    return new ApiError(
      'RATE_LIMITED',
      `Too many failed authentications from this address (limit ${this.limit} per minute); retry in ${seconds} s`,
      { 'Retry-After': seconds },
    );
  }
}
