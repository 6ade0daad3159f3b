import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ApiError, notFound, validationFailed } from '../errors/api-error.js';
import { PetEventsRepository } from '../events/pet-events.repository.js';
import { encodeCursor } from '../http/page-cursor.js';
import { type IfMatch, ifMatchAllows } from '../http/if-match.js';
import { DEFAULT_PAGE_SIZE } from '../http/page-limit.js';
import { requestHash } from '../idempotency/idempotency-key.js';
import type { StoredResponse } from '../idempotency/idempotency-keys.repository.js';
import { type ClaimKey, IdempotentCreates } from '../idempotency/idempotent-creates.js';
import { currentTraceParent } from '../telemetry/tracing.js';
import { Clock } from '../time/clock.js';
import type { ListOrdersQueryDto } from './dto/list-orders-query.dto.js';
import type { NewOrderDto } from './dto/new-order.dto.js';
import type { OrderDto } from './dto/order.dto.js';
import { OrderMetrics } from './order-metrics.js';
import { OPEN_REVISION, orderEntityTag } from './order-entity-tag.js';
import { toOrderDto } from './order-json.js';
import type { OrderEntity } from './order.entity.js';
import type { PetHold } from './pet-hold.js';
import { type OrderChange, OrdersRepository } from './orders.repository.js';
import type { SqlTransaction } from '../database/sql-runner.js';

export interface OrderPage {
  orders: OrderDto[];
  /** Query parameters of the next page; absent on the last page. */
  next?: Record<string, string>;
}

/** One order as answers carry it: the Order and its strong ETag. */
export interface TaggedOrder {
  order: OrderDto;
  etag: string;
}

/**
 * A createOrder answer with an Idempotency-Key: the order this request placed, or the response
 * an earlier request with the same key got, as it was sent.
 */
export type PlacedOrder =
  (TaggedOrder & { replayed: false }) | (StoredResponse & { replayed: true });

/**
 * Orders (docs/api-design.md, "Orders"): a hold on an available pet, then its sale, its release,
 * or its expiry at the deadline. Every change is one transaction guarded by the database; a write
 * at or after an order's deadline expires it first, in its own transaction.
 */
@Injectable()
export class OrdersService {
  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: PetEventsRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly metrics: OrderMetrics,
    private readonly idempotency: IdempotentCreates,
  ) {}

  async list({
    limit = DEFAULT_PAGE_SIZE,
    status,
    petId,
    cursor: afterId = 0,
  }: ListOrdersQueryDto): Promise<OrderPage> {
    // One row more than asked says whether a next page exists without a count query.
    const rows = await this.orders.findPage({ afterId, status, petId, limit: limit + 1 });
    const orders = rows.slice(0, limit).map(toOrderDto);
    if (rows.length <= limit) return { orders };
    return {
      orders,
      next: {
        limit: String(limit),
        ...(status && { status }),
        ...(petId !== undefined && { petId: String(petId) }),
        cursor: encodeCursor(orders[orders.length - 1].id),
      },
    };
  }

  async get(id: number): Promise<TaggedOrder> {
    const order = await this.orders.findById(id);
    if (!order) throw notFound(`No order with id ${id}`);
    return tagged(order);
  }

  /**
   * Holds the pet for `holdSeconds` (docs/api-design.md, "Orders"). The pet's row decides: of
   * concurrent orders of one pet the database lets one change it. A pet held by an order whose
   * deadline has passed is released first, in its own transaction, and then ordered.
   */
  async place(newOrder: NewOrderDto, claimKey?: ClaimKey): Promise<TaggedOrder> {
    const { petId, holdSeconds } = newOrder;
    const holdMs = (holdSeconds ?? this.config.orderHoldSeconds) * 1000;
    const claim =
      claimKey &&
      ((transaction: SqlTransaction, { order }: OrderChange) =>
        claimKey(transaction, petId, sentResponse(tagged(order))));
    for (let attempt = 0; ; attempt++) {
      const now = this.clock.now();
      const expiresAt = new Date(now.getTime() + holdMs);
      const placed = await this.orders.place(petId, now, expiresAt, currentTraceParent(), claim);
      if (!('refused' in placed)) {
        this.committed('order.created', placed);
        return tagged(placed.order);
      }
      // A second pass comes only after a lapsed hold was released: a refusal then is final.
      if (attempt > 0 || (await this.holdOf(petId, now)) !== 'released') {
        throw await this.refusal(petId);
      }
    }
  }

  /**
   * Places the order once per (API key, Idempotency-Key), as createPet creates a pet
   * (docs/api-design.md, "Idempotency"): a retry gets the first 201 back, even once the order
   * has closed; a refusal stores nothing, so a retry asks again.
   */
  async placeOnce(newOrder: NewOrderDto, apiKeyId: number, key: string): Promise<PlacedOrder> {
    const { petId, holdSeconds } = newOrder;
    const once = await this.idempotency.once(
      { apiKeyId, key, requestHash: requestHash({ createOrder: [petId, holdSeconds ?? null] }) },
      (claimKey) => this.place(newOrder, claimKey),
      // Every order claim stores its response; a claim without one was a pet's.
      () => Promise.reject(new Error('An order claim without its response')),
    );
    if (once.replayed) return { ...once.response, replayed: true };
    return { ...once.created, replayed: false };
  }

  async complete(id: number, ifMatch: IfMatch | undefined): Promise<TaggedOrder> {
    return this.close(id, 'completed', ifMatch);
  }

  async cancel(id: number, ifMatch: IfMatch | undefined): Promise<TaggedOrder> {
    return this.close(id, 'cancelled', ifMatch);
  }

  /**
   * Whether an open order holds the pet at `now`. A hold whose deadline has passed is expired
   * first, in its own transaction: the hold ends exactly at its deadline for every write, not
   * when the sweep comes by.
   */
  async holdOf(petId: number, now: Date): Promise<PetHold> {
    const open = await this.orders.findOpenOfPet(petId);
    if (!open) return 'free';
    if (open.expiresAt > now) return 'held';
    await this.expire(open.id, now);
    return 'released';
  }

  /**
   * Closes an open order. Refusals come in the documented order: 404, 412, 409. An open order
   * past its deadline is expired first, so it answers as the expired order it is.
   */
  private async close(
    id: number,
    outcome: 'completed' | 'cancelled',
    ifMatch: IfMatch | undefined,
  ): Promise<TaggedOrder> {
    // Optimistic first: the close changes only an open order before its deadline, and an open
    // order's ETag is always its first revision's, so an If-Match that allows that tag is met.
    // Anything else changes nothing and is answered below, from the order as read.
    if (ifMatchAllows(ifMatch, orderEntityTag(id, OPEN_REVISION))) {
      const closed = await this.orders.close(id, outcome, this.clock.now(), currentTraceParent());
      if (closed) return this.closed(outcome, closed);
    }
    // Each pass either closes the order or finds it final: it changes state only once.
    for (;;) {
      const now = this.clock.now();
      let order = await this.orders.findLatestById(id);
      if (!order) throw notFound(`No order with id ${id}`);
      if (order.status === 'open' && order.expiresAt <= now) {
        order = (await this.expire(id, now)) ?? (await this.orders.findLatestById(id))!;
      }
      if (!ifMatchAllows(ifMatch, etagOf(order))) {
        throw new ApiError(
          'PRECONDITION_FAILED',
          `If-Match does not match the current ETag of order ${id}: read the order again, then retry`,
        );
      }
      if (order.status !== 'open') throw orderNotOpen(order);
      const closed = await this.orders.close(id, outcome, now, currentTraceParent());
      if (closed) return this.closed(outcome, closed);
    }
  }

  private closed(outcome: 'completed' | 'cancelled', change: OrderChange): TaggedOrder {
    this.committed(`order.${outcome}`, change);
    return tagged(change.order);
  }

  /** Expires the order if it lapsed by `now`; the order after, or null when another write did. */
  private async expire(id: number, now: Date): Promise<OrderEntity | null> {
    const expired = await this.orders.expire(id, now);
    if (!expired) return null;
    this.committed('order.expired', expired);
    return expired.order;
  }

  private committed(
    type: 'order.created' | 'order.completed' | 'order.cancelled' | 'order.expired',
    change: OrderChange,
  ): void {
    this.events.committed(type);
    this.events.committed('pet.updated');
    this.metrics.changed(type, change, this.clock.now());
  }

  /** Why the pet could not be ordered, read after the refusal: 400 for no pet, else 409. */
  private async refusal(petId: number): Promise<ApiError> {
    const pet = await this.orders.findPetStatus(petId);
    if (pet === undefined) return validationFailed(`petId ${petId} names no pet`);
    const { status, held } = pet;
    const what = held
      ? 'is pending, held by an open order'
      : status === null
        ? 'has no status'
        : `is ${status}`;
    return new ApiError(
      'PET_NOT_AVAILABLE',
      `Pet ${petId} ${what}: only an available pet can be ordered`,
    );
  }
}

/** The 409 of a write to an order that is no longer open; the message names its state. */
export function orderNotOpen({ id, status }: OrderEntity): ApiError {
  return new ApiError(
    'ORDER_NOT_OPEN',
    `Order ${id} is ${status}: only an open order can be completed or cancelled`,
  );
}

function etagOf(order: OrderEntity): string {
  return orderEntityTag(order.id, order.revision);
}

function tagged(order: OrderEntity): TaggedOrder {
  return { order: toOrderDto(order), etag: etagOf(order) };
}

/** The response as the controller sends it: the serializer writes an Order as JSON.stringify does. */
function sentResponse({ order, etag }: TaggedOrder): StoredResponse {
  return { body: JSON.stringify(order), etag };
}
