import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { PetEventType } from '../../events/pet-event.js';
import { WEBHOOK_PROPERTIES } from './webhook-properties.js';

@ApiSchema({
  name: 'WebhookWithSecret',
  description:
    'A webhook just created, or just given a new secret, with its signing secret: the only answer that shows it.',
})
export class WebhookWithSecretDto {
  @ApiProperty(WEBHOOK_PROPERTIES.id)
  id: number;

  @ApiProperty(WEBHOOK_PROPERTIES.url)
  url: string;

  @ApiProperty(WEBHOOK_PROPERTIES.events)
  events: PetEventType[] | null;

  @ApiProperty(WEBHOOK_PROPERTIES.createdAt)
  createdAt: string;

  @ApiProperty(WEBHOOK_PROPERTIES.secret)
  secret: string;
}
