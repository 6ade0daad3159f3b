import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { OrderStatus } from '../order-status.js';
import { ORDER_PROPERTIES } from './order-properties.js';

@ApiSchema({
  name: 'Order',
  description:
    'A buyer’s hold on an animal, then its sale or release (docs/api-design.md, "Orders").',
})
export class OrderDto {
  @ApiProperty(ORDER_PROPERTIES.id)
  id: number;

  @ApiProperty(ORDER_PROPERTIES.petId)
  petId: number;

  @ApiProperty(ORDER_PROPERTIES.status)
  status: OrderStatus;

  @ApiProperty(ORDER_PROPERTIES.createdAt)
  createdAt: string;

  @ApiProperty(ORDER_PROPERTIES.expiresAt)
  expiresAt: string;

  @ApiPropertyOptional(ORDER_PROPERTIES.closedAt)
  closedAt?: string;
}
