import { ApiProperty, ApiSchema, PickType } from '@nestjs/swagger';
import { WebhookDto } from './webhook.dto.js';
import { WEBHOOK_PROPERTIES } from './webhook-properties.js';

@ApiSchema({
  name: 'WebhookWithSecret',
  description:
    'A webhook just created, or just given a new secret, with its signing secret: the only answer that shows it.',
})
export class WebhookWithSecretDto extends PickType(WebhookDto, [
  'id',
  'url',
  'events',
  'createdAt',
] as const) {
  @ApiProperty(WEBHOOK_PROPERTIES.secret)
  secret: string;
}
