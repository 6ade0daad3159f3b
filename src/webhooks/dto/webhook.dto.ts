import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { EventType } from '../../events/pet-event.js';
import { OWED_COUNTED_UP_TO } from '../webhook-subscription.js';
import { TIMESTAMP, WEBHOOK_PROPERTIES } from './webhook-properties.js';

const WHEN_NEVER = { ...TIMESTAMP, nullable: true } as const;
const COUNTED = OWED_COUNTED_UP_TO.toLocaleString('en');

@ApiSchema({
  name: 'Webhook',
  description: 'A webhook and the state of its deliveries; never its secret.',
})
export class WebhookDto {
  @ApiProperty(WEBHOOK_PROPERTIES.id)
  id: number;

  @ApiProperty(WEBHOOK_PROPERTIES.url)
  url: string;

  @ApiProperty(WEBHOOK_PROPERTIES.events)
  events: EventType[] | null;

  @ApiProperty(WEBHOOK_PROPERTIES.createdAt)
  createdAt: string;

  @ApiProperty({
    description:
      'True once the receiver answered 410 Gone: nothing more is sent. Delete the webhook and create a new one to start again.',
    type: 'boolean',
    example: false,
  })
  disabled: boolean;

  @ApiProperty({
    description: 'When a delivery last succeeded (a 2xx answer).',
    ...WHEN_NEVER,
    example: '2026-11-25T18:04:05.310Z',
  })
  lastSuccessAt: string | null;

  @ApiProperty({
    description: 'When a delivery attempt last failed.',
    ...WHEN_NEVER,
    example: '2026-11-25T17:52:41.877Z',
  })
  lastFailureAt: string | null;

  @ApiProperty({
    description:
      'Why the last failed attempt failed: the status the receiver answered, or what went wrong before it answered.',
    type: 'string',
    nullable: true,
    example: 'HTTP 503',
  })
  lastFailureReason: string | null;

  @ApiProperty({
    description: `Deliveries owed: events not yet delivered that will be attempted. At most ${COUNTED}, counted among the next ${COUNTED} events and the first ${COUNTED} failed deliveries: a webhook further behind reads ${COUNTED}, or less when it takes only some event types.`,
    type: 'integer',
    minimum: 0,
    maximum: OWED_COUNTED_UP_TO,
    example: 0,
  })
  pendingDeliveries: number;

  @ApiProperty({
    description: `Deliveries given up after their last attempt failed; they are not sent again. Counted among the webhook's first ${COUNTED} failed deliveries.`,
    type: 'integer',
    minimum: 0,
    maximum: OWED_COUNTED_UP_TO,
    example: 0,
  })
  givenUpDeliveries: number;
}
