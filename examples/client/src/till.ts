import { randomUUID } from 'node:crypto';
import type { components } from './api-schema.js';
import { type AnimalStoreClient, failure } from './example.js';

export type Order = components['schemas']['Order'];

/** What a till's sale came to: sold, or the animal was not for sale (someone else holds it). */
export type Sale = { sold: Order } | { notAvailable: string };

/**
 * A till's sale of one animal (docs/api-design.md, "Selling an animal"): hold it for the buyer,
 * then complete the order once they paid. A pet that is not available (sold, held at another till)
 * is an answer, not a failure. The Idempotency-Key, one per sale, makes a retry of a lost answer
 * place nothing twice.
 */
export async function sell(
  client: AnimalStoreClient,
  petId: number,
  holdSeconds = 600,
  saleKey: string = randomUUID(),
): Promise<Sale> {
  const placed = await client.POST('/orders', {
    body: { petId, holdSeconds },
    params: { header: { 'Idempotency-Key': saleKey } },
  });
  if (placed.error?.code === 'PET_NOT_AVAILABLE') return { notAvailable: placed.error.message };
  if (placed.data === undefined) throw failure('createOrder', placed.error, placed.response);

  // The buyer pays here. If-Match: complete this order as it was placed, nothing else.
  const completed = await client.POST('/orders/{orderId}/complete', {
    params: {
      path: { orderId: placed.data.id },
      header: { 'If-Match': placed.response.headers.get('ETag')! },
    },
  });
  if (completed.data === undefined)
    throw failure('completeOrder', completed.error, completed.response);
  return { sold: completed.data };
}

/** The `till <petId>` command's lines. */
export async function runTill(client: AnimalStoreClient, petId: number): Promise<string[]> {
  const sale = await sell(client, petId);
  if ('notAvailable' in sale) return [`not sold: ${sale.notAvailable}`];
  const { id, closedAt } = sale.sold;
  return [`sold pet ${petId}: order ${id} completed at ${closedAt}`];
}
