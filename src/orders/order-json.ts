import type { OrderDto } from './dto/order.dto.js';
import type { OrderEntity } from './order.entity.js';

/** The Order as answers and events carry it, members in the documented order. */
export function toOrderDto({
  id,
  petId,
  status,
  createdAt,
  expiresAt,
  closedAt,
}: OrderEntity): OrderDto {
  const order: OrderDto = {
    id,
    petId,
    status,
    createdAt: createdAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
  };
  if (closedAt !== null) order.closedAt = closedAt.toISOString();
  return order;
}

/** The Order's JSON text, as an event's `data.order` holds it. */
export function orderJson(order: OrderEntity): string {
  return JSON.stringify(toOrderDto(order));
}

/**
 * The Order's JSON after `{"id":` and its id: the statement that inserts the order puts in the id
 * the database gives it (order-change-statements.ts).
 */
export function orderJsonAfterId(order: OrderEntity): string {
  return orderJson({ ...order, id: 0 }).slice('{"id":0'.length);
}
